"""``keep_large_buffers``: megabyte buffers allocated and freed frame after frame stop costing a
page fault per page each time (what makes copying images into a bag slow)."""

from __future__ import annotations

import subprocess
import sys

COUNT_FAULTS = '''
import ctypes, io, resource, sys
from arsim_core.process.memory import keep_large_buffers
if sys.argv[1] == 'tuned':
    assert keep_large_buffers()
else:  # glibc's initial threshold, pinned: glibc raises it after some frees, not reliably
    assert ctypes.CDLL(None).mallopt(-3, 128 * 1024) == 1  # M_MMAP_THRESHOLD
frame = bytes(921_600)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(200):  # a message copied into a record, the record into a chunk, the chunk out
    record = io.BytesIO()
    record.write(frame)
    chunk = io.BytesIO()
    chunk.write(record.getbuffer())
    data = chunk.getvalue()
    del record, chunk, data
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
'''


def page_faults(mode: str) -> int:
    done = subprocess.run([sys.executable, '-c', COUNT_FAULTS, mode], capture_output=True,
                          text=True, check=True)
    return int(done.stdout)


def test_large_buffers_stay_in_the_heap_instead_of_being_faulted_in_again() -> None:
    default, tuned = page_faults('default'), page_faults('tuned')
    assert default > 200 * 225  # every copy faults its 225 pages in again
    assert tuned < default / 10
