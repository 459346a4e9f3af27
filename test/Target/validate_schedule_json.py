#!/usr/bin/env python3
"""Checks a pp-schedule-v1 JSON document against docs/ScheduleJSON.md.

Independent of the compiler on purpose: it reads only the JSON and the
semantics the spec states. Prints one line per violation to stderr and exits
with 1 if there is any, else prints a one-line summary and exits with 0.

    validate_schedule_json.py schedule.json [more.json ...]   (- for stdin)
"""

import json
import sys
from collections import defaultdict

FORMAT = "pp-schedule-v1"
COMPUTE_OPS = ("F", "B", "W", "BW")
TRANSFER_OPS = ("SEND_F", "RECV_F", "SEND_B", "RECV_B")
# ALLREDUCE and OPT are the spec's; REDUCESCATTER and ALLGATHER are pp's
# extension for ZeRO-1 (a schedule with "zero": 1), placed like ALLREDUCE.
STAGE_OPS = ("ALLREDUCE", "OPT", "REDUCESCATTER", "ALLGATHER")
FIELDS = {
    **{op: ("stage", "mb") for op in COMPUTE_OPS},
    **{op: ("stage", "mb", "peer") for op in TRANSFER_OPS},
    **{op: ("stage",) for op in STAGE_OPS},
}
COST_PER_STAGE = ("F", "B", "W", "activation", "weight_grad_stash")


def is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value):
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and value == value and value not in (float("inf"), float("-inf")))


def neighbour(op, stage):
    """The stage on the other end of a transfer: activations flow s -> s+1,
    gradients s -> s-1."""
    return stage + 1 if op in ("SEND_F", "RECV_B") else stage - 1


def transfer_key(op, stage, mb):
    """(kind, producer stage, mb): equal for a SEND and its matching RECV."""
    kind = "F" if op.endswith("_F") else "B"
    producer = stage if op.startswith("SEND") else neighbour(op, stage)
    return (kind, producer, mb)


class Validator:
    def __init__(self, doc):
        self.doc = doc
        self.errors = []

    def error(self, message):
        self.errors.append(message)

    # -- Structure -----------------------------------------------------------

    def check_header(self):
        doc = self.doc
        if not isinstance(doc, dict):
            self.error("the document is not a JSON object")
            return False
        # A wrong format or name does not keep the rest from being checked.
        if doc.get("format") != FORMAT:
            self.error(f'"format" must be "{FORMAT}", got {doc.get("format")!r}')
        if not isinstance(doc.get("name"), str):
            self.error('"name" must be a string')
        ok = True
        for field in ("num_ranks", "num_stages", "num_microbatches"):
            if not is_int(doc.get(field)) or doc[field] < 1:
                self.error(f'"{field}" must be a positive integer, got '
                           f"{doc.get(field)!r}")
                ok = False
        if not ok:
            return False
        num_ranks, num_stages = doc["num_ranks"], doc["num_stages"]
        stage_rank = doc.get("stage_rank")
        if not isinstance(stage_rank, list) or len(stage_rank) != num_stages:
            self.error(f'"stage_rank" must be a list of num_stages = '
                       f"{num_stages} ranks, got {stage_rank!r}")
            ok = False
            stage_rank = []
        for stage, rank in enumerate(stage_rank):
            if not is_int(rank) or not 0 <= rank < num_ranks:
                self.error(f"stage_rank[{stage}] = {rank!r} is not a rank in "
                           f"0..{num_ranks - 1}")
                ok = False
        ranks = doc.get("ranks")
        if not isinstance(ranks, list) or len(ranks) != num_ranks:
            self.error(f'"ranks" must be a list of num_ranks = {num_ranks} '
                       f"action lists")
            return False
        for rank, actions in enumerate(ranks):
            if not isinstance(actions, list):
                self.error(f"ranks[{rank}] is not a list of actions")
                ok = False
        if "cost" in doc:
            self.check_cost(doc["cost"])
        return ok

    def check_cost(self, cost):
        num_stages = self.doc["num_stages"]
        if not isinstance(cost, dict):
            self.error('"cost" must be an object')
            return False
        ok = True
        for field in COST_PER_STAGE:
            values = cost.get(field)
            if (not isinstance(values, list) or len(values) != num_stages
                    or not all(is_number(v) and v >= 0 for v in values)):
                self.error(f'cost "{field}" must be a list of {num_stages} '
                           f"non-negative numbers, got {values!r}")
                ok = False
        if not is_number(cost.get("comm")) or cost["comm"] < 0:
            self.error(f'cost "comm" must be a non-negative number, got '
                       f'{cost.get("comm")!r}')
            ok = False
        return ok

    def check_action(self, rank, index, action):
        """Checks the fields of one action; returns (op, stage, mb, peer) or
        None."""
        where = f"ranks[{rank}][{index}]"
        doc = self.doc
        if not isinstance(action, dict):
            self.error(f"{where} is not an object")
            return None
        op = action.get("op")
        if op not in FIELDS:
            self.error(f"{where}: unknown op {op!r}")
            return None
        fields = FIELDS[op]
        # pp's extension (docs/Dialects/PP.md): a transfer may say it is
        # posted in one exchange group with the one before it. Under the
        # spec's semantics (sends never block) that changes nothing.
        optional = {"grouped"} if op in TRANSFER_OPS else set()
        extra = sorted(set(action) - set(fields) - optional - {"op"})
        if "grouped" in optional and not isinstance(
                action.get("grouped", False), bool):
            self.error(f'{where}: {op} "grouped" must be a boolean, got '
                       f'{action["grouped"]!r}')
        if extra:
            self.error(f"{where}: {op} has no field(s) {', '.join(extra)}")
        limits = {"stage": doc["num_stages"], "mb": doc["num_microbatches"],
                  "peer": doc["num_ranks"]}
        values = {}
        for field in fields:
            value = action.get(field)
            if not is_int(value) or not 0 <= value < limits[field]:
                self.error(f"{where}: {op} needs \"{field}\" in "
                           f"0..{limits[field] - 1}, got {value!r}")
                return None
            values[field] = value
        stage = values["stage"]
        owner = doc["stage_rank"][stage]
        if owner != rank:
            self.error(f"{where}: {op} of stage {stage} is on rank {rank}, "
                       f"but stage_rank[{stage}] = {owner}")
            return None
        return (op, stage, values.get("mb"), values.get("peer"))

    # -- Semantics -----------------------------------------------------------

    def run(self):
        if not self.check_header():
            return self.errors
        # A bad format, name or cost does not keep the actions from being
        # checked; a bad action does keep its consequences from being checked.
        num_header_errors = len(self.errors)
        doc = self.doc
        stage_rank = doc["stage_rank"]
        num_stages, num_mbs = doc["num_stages"], doc["num_microbatches"]

        # Where each (op, stage, mb) is: a list of (rank, index).
        where = defaultdict(list)
        actions = []
        for rank, rank_actions in enumerate(doc["ranks"]):
            parsed = []
            for index, action in enumerate(rank_actions):
                checked = self.check_action(rank, index, action)
                if checked is None:
                    continue
                parsed.append((index, checked))
                op, stage, mb, _ = checked
                if op not in STAGE_OPS:
                    where[(op, stage, mb)].append((rank, index))
            actions.append(parsed)
        if len(self.errors) > num_header_errors:
            return self.errors

        def first(op, stage, mb):
            places = where.get((op, stage, mb))
            return places[0] if places else None

        def before(a, b):
            return a is not None and b is not None and a[0] == b[0] and a[1] < b[1]

        def name(op, stage, mb):
            return f"{op}(stage {stage}, mb {mb})"

        # Every (stage, mb): one F, and one BW or one B followed by one W.
        for (op, stage, mb), places in where.items():
            if len(places) > 1:
                self.error(f"{name(op, stage, mb)} appears {len(places)} times, "
                           f"at (rank, index) {places}")
        for stage in range(num_stages):
            for mb in range(num_mbs):
                f, bw = first("F", stage, mb), first("BW", stage, mb)
                b, w = first("B", stage, mb), first("W", stage, mb)
                if f is None:
                    self.error(f"missing {name('F', stage, mb)}")
                if bw is not None and (b is not None or w is not None):
                    self.error(f"{name('BW', stage, mb)} and a split B/W of the "
                               f"same micro-batch")
                elif bw is None and (b is None or w is None):
                    missing = ("B or BW" if b is None and w is None
                               else "W" if w is None else "B")
                    self.error(f"missing {missing} of stage {stage} mb {mb}")
                elif b is not None and not before(b, w):
                    self.error(f"{name('W', stage, mb)} does not follow "
                               f"{name('B', stage, mb)} on rank "
                               f"{stage_rank[stage]}")

        # Transfers: a neighbour on another rank, the right peer, one partner.
        sends, recvs = defaultdict(list), defaultdict(list)
        for rank, parsed in enumerate(actions):
            for index, (op, stage, mb, peer) in parsed:
                if op not in TRANSFER_OPS:
                    continue
                other = neighbour(op, stage)
                if not 0 <= other < num_stages:
                    self.error(f"ranks[{rank}][{index}]: {op} of stage {stage} "
                               f"has no neighbour stage {other}")
                    continue
                if stage_rank[other] == rank:
                    self.error(f"ranks[{rank}][{index}]: {op} between stages "
                               f"{stage} and {other}, both on rank {rank}; "
                               f"same-rank dependencies must not use transfers")
                if peer != stage_rank[other]:
                    self.error(f"ranks[{rank}][{index}]: {op} of stage {stage} "
                               f"has peer {peer}, but stage {other} is on rank "
                               f"{stage_rank[other]}")
                table = sends if op.startswith("SEND") else recvs
                table[transfer_key(op, stage, mb)].append((rank, index))
        for key in sorted(set(sends) | set(recvs)):
            kind, producer, mb = key
            if len(sends[key]) != 1 or len(recvs[key]) != 1:
                self.error(f"transfer of {'activation' if kind == 'F' else 'gradient'} "
                           f"produced by stage {producer} mb {mb}: "
                           f"{len(sends[key])} SEND_{kind} at {sends[key]} and "
                           f"{len(recvs[key])} RECV_{kind} at {recvs[key]}, "
                           f"expected one each")

        # Dependencies: same rank by order, across ranks through a RECV
        # before the consumer and a SEND after the producer.
        def check_dependency(consumer, producer, recv_op):
            c_op, c_stage, mb = consumer
            p_op, p_stage, _ = producer
            c_at = first(*consumer)
            if c_at is None:
                return
            if stage_rank[p_stage] == stage_rank[c_stage]:
                p_at = first(*producer)
                if p_at is not None and not before(p_at, c_at):
                    self.error(f"{name(*consumer)} does not follow "
                               f"{name(*producer)} on rank {c_at[0]}")
                return
            recv_at = first(recv_op, c_stage, mb)
            if not before(recv_at, c_at):
                self.error(f"{name(*consumer)} on rank {c_at[0]} is not "
                           f"preceded by {name(recv_op, c_stage, mb)}")
            send_op = "SEND_" + recv_op[-1]
            send_at = first(send_op, p_stage, mb)
            p_at = first(*producer)
            if p_at is not None and send_at is not None and not before(p_at, send_at):
                self.error(f"{name(send_op, p_stage, mb)} on rank {send_at[0]} "
                           f"does not follow {name(*producer)}")

        def backward(stage, mb):
            return ("BW" if first("BW", stage, mb) else "B", stage, mb)

        for stage in range(num_stages):
            for mb in range(num_mbs):
                bwd = backward(stage, mb)
                if stage > 0:
                    check_dependency(("F", stage, mb), ("F", stage - 1, mb),
                                     "RECV_F")
                check_dependency(bwd, ("F", stage, mb), None)
                if stage + 1 < num_stages:
                    check_dependency(bwd, backward(stage + 1, mb), "RECV_B")
        # Simulating needs every RECV matched to one SEND.
        if len(self.errors) > num_header_errors:
            return self.errors

        self.check_deadlock_freedom(actions, sends)
        return self.errors

    def check_deadlock_freedom(self, actions, sends):
        """Runs the ranks: a SEND never blocks, a RECV blocks until its SEND
        was posted. Linear: a blocked rank parks on the SEND it waits for."""
        num_ranks = len(actions)
        position = [0] * num_ranks
        posted = set()
        waiting = defaultdict(list)
        worklist = list(range(num_ranks))
        while worklist:
            rank = worklist.pop()
            parsed = actions[rank]
            while position[rank] < len(parsed):
                _, (op, stage, mb, _) = parsed[position[rank]]
                if op.startswith("RECV"):
                    send = sends[transfer_key(op, stage, mb)][0]
                    if send not in posted:
                        waiting[send].append(rank)
                        break
                if op.startswith("SEND"):
                    here = (rank, parsed[position[rank]][0])
                    posted.add(here)
                    worklist.extend(waiting.pop(here, []))
                position[rank] += 1
        stuck = [r for r in range(num_ranks) if position[r] < len(actions[r])]
        if stuck:
            blocked = ", ".join(
                f"rank {r} at ranks[{r}][{actions[r][position[r]][0]}] "
                f"({actions[r][position[r]][1][0]} stage "
                f"{actions[r][position[r]][1][1]} mb "
                f"{actions[r][position[r]][1][2]} from rank "
                f"{actions[r][position[r]][1][3]})" for r in stuck)
            self.error(f"deadlock: {blocked}")


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    status = 0
    for path in argv[1:]:
        try:
            if path == "-":
                doc = json.load(sys.stdin)
            else:
                with open(path) as f:
                    doc = json.load(f)
        except (OSError, ValueError) as e:
            print(f"{path}: error: cannot read JSON: {e}", file=sys.stderr)
            status = 1
            continue
        errors = Validator(doc).run()
        for message in errors:
            print(f"{path}: error: {message}", file=sys.stderr)
        if errors:
            status = 1
            continue
        num_actions = sum(len(actions) for actions in doc["ranks"])
        print(f"{path}: valid {FORMAT} schedule \"{doc['name']}\": "
              f"{doc['num_ranks']} ranks, {doc['num_stages']} stages, "
              f"{doc['num_microbatches']} micro-batches, {num_actions} actions")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
