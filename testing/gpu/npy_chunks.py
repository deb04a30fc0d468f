"""The writing half of the chunked generators (plummer3_chunks.py,
manifold_chunks.py): a float32 .npy of n x d rows made by a pool of
processes, each chunk computed and written into its own rows of the file,
so that no process holds the whole set."""
import multiprocessing as mp

import numpy as np


def put(path, a, rows):
    """Rows a .. a + len(rows) of the .npy at path."""
    mm = np.load(path, mmap_mode='r+')
    mm[a:a + len(rows)] = rows
    mm.flush()


def generate(path, n, d, chunk_rows, job, args, workers):
    """Creates path (n x d float32) and runs job(args + (c,)) for every
    chunk c of chunk_rows rows on `workers` processes; job writes its rows
    with put() and returns their count.  Returns the rows written."""
    mm = np.lib.format.open_memmap(path, mode='w+', dtype=np.float32, shape=(n, d))
    del mm
    jobs = [tuple(args) + (c,) for c in range((n + chunk_rows - 1) // chunk_rows)]
    with mp.Pool(workers) as pool:
        return sum(pool.imap_unordered(job, jobs))
