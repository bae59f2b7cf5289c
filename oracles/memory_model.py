"""Facts about device memory that every oracle shares: where buffers live and what an access
outside them is called.

Buffer k (the k-th buffer uniform of a function) lives at address (k + 1) << 32: above 2^32,
so 32-bit address math cannot reach one by accident, and the buffer of an address is its
high word.
"""

OUT_OF_BOUNDS = "out-of-bounds access"
DATA_RACE = "data race"


def buffer_base(buffer_number: int) -> int:
    return (buffer_number + 1) << 32
