"""Sequence regressors on recurrent layers: a 2-layer nn.LSTM and an
nn.GRU (batch_first, zero initial state), the last step's output into a
linear head."""

import torch.nn as nn
import torch.nn.functional as F

from harness import Case

ROWS, SEQ, FEATURES, HIDDEN, OUT = 8, 4, 6, 12, 3


class LSTMRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(FEATURES, HIDDEN, num_layers=2, batch_first=True)
        self.head = nn.Linear(HIDDEN, OUT)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


class GRURegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(FEATURES, HIDDEN, batch_first=True)
        self.head = nn.Linear(HIDDEN, OUT)

    def forward(self, x):
        out, _ = self.gru(x)
        return self.head(out[:, -1])


CASES = [
    Case("lstm", LSTMRegressor, F.mse_loss, inputs=[(ROWS, SEQ, FEATURES)],
         targets=[(ROWS, OUT)], lr=0.2, stages=(), slow_stages=(2,),
         whole_batch="slow",
         uses=["nn.LSTM", "nn.Linear", "F.mse_loss"]),
    Case("gru", GRURegressor, F.mse_loss, inputs=[(ROWS, SEQ, FEATURES)],
         targets=[(ROWS, OUT)], lr=0.2, stages=(), slow_stages=(2,),
         whole_batch="ci",
         uses=["nn.GRU", "nn.Linear", "F.mse_loss"]),
]
