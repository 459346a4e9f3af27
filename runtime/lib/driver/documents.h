/* Documents as samples: found in --tokens by their end-of-document id
   (--document-end ID), or given as document lengths (--sample-lengths
   FILE.npy), read a step at a time. */
#ifndef PPRT_DRIVER_DOCUMENTS_H
#define PPRT_DRIVER_DOCUMENTS_H

#include "driver/driver.h"

typedef struct pprt_documents pprt_documents;

/* Whether the run's samples are documents. */
bool pprt_documents_wanted(const pprt_driver_options *o);

/* What the command line gets wrong about documents, or NULL. */
const char *pprt_documents_option_problem(const pprt_driver_options *o);

/* Opens the documents of the corpus's `corpus_length` tokens, checked
   against the program; NULL, with the reason in `err`, if they cannot
   train it. */
pprt_documents *pprt_documents_open(pprt_driver *d, int64_t corpus_length,
                                    char *err, size_t err_size);

/* What messages about the documents start with: "--document-end 0". */
const char *pprt_documents_label(const pprt_documents *docs);

/* The next step's samples, one per document in the tokens' order (back at
   the first document after the last): their predicted tokens in
   `*length` and first tokens in `*start` (malloc'ed). Their count, or -1
   with the reason in `err`. */
int64_t pprt_documents_next_step(pprt_driver *d, pprt_documents *docs,
                                 int64_t **length, int64_t **start, char *err,
                                 size_t err_size);

void pprt_documents_free(pprt_documents *docs);

#endif
