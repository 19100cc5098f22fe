"""numpy's `SeedSequence` and its `PCG64` generator's `random()`, in Python: a sweep's seeds and
uniform draws (`sweep.spec.derive`) without importing numpy (~50 ms a process, issue 31). Bit for
bit numpy's (tests/test_sweep.py compares them over many seeds): the algorithms of
numpy/random/bit_generator.pyx (SeedSequence: hashmix, mix, mix_entropy, generate_state; pool of
4 words) and numpy/random/src/pcg64 (pcg64_set_seed, XSL-RR 128/64 output, `next_double`)."""
from __future__ import annotations

M32 = 0xFFFF_FFFF
M64 = (1 << 64) - 1
M128 = (1 << 128) - 1
INIT_A, MULT_A, INIT_B, MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
MIX_MULT_L, MIX_MULT_R = 0xCA01F9DD, 0x4973F715
XSHIFT = 16
POOL_SIZE = 4
#: PCG_DEFAULT_MULTIPLIER_128
PCG_MULT = 0x2360ED051FC65DA44385DF649FCCF645


def _words(n: int) -> list[int]:
    """A non-negative int as 32-bit words, least significant first (0: one word)."""
    if n < 0:
        raise ValueError("expected non-negative integers")
    out = [n & M32]
    n >>= 32
    while n:
        out.append(n & M32)
        n >>= 32
    return out


class SeedSequence:
    """`numpy.random.SeedSequence(entropy)` for a list of non-negative ints, no spawn key."""

    def __init__(self, entropy: list[int]):
        self.pool = self._mix([w for e in entropy for w in _words(int(e))])

    @staticmethod
    def _mix(entropy: list[int]) -> list[int]:
        h = [INIT_A]

        def hashmix(v: int) -> int:
            v ^= h[0]
            h[0] = (h[0] * MULT_A) & M32
            v = (v * h[0]) & M32
            return v ^ (v >> XSHIFT)

        def mix(x: int, y: int) -> int:
            r = (MIX_MULT_L * x - MIX_MULT_R * y) & M32
            return r ^ (r >> XSHIFT)

        pool = [hashmix(entropy[i] if i < len(entropy) else 0) for i in range(POOL_SIZE)]
        for src in range(POOL_SIZE):
            for dst in range(POOL_SIZE):
                if src != dst:
                    pool[dst] = mix(pool[dst], hashmix(pool[src]))
        for src in range(POOL_SIZE, len(entropy)):
            for dst in range(POOL_SIZE):
                pool[dst] = mix(pool[dst], hashmix(entropy[src]))
        return pool

    def generate_state64(self, n: int) -> list[int]:
        """`generate_state(n, numpy.uint64)`: 2n 32-bit words, each pair little-endian."""
        h = INIT_B
        w = []
        for i in range(2 * n):
            v = self.pool[i % POOL_SIZE] ^ h
            h = (h * MULT_B) & M32
            v = (v * h) & M32
            w.append(v ^ (v >> XSHIFT))
        return [w[2 * i] | (w[2 * i + 1] << 32) for i in range(n)]


class PCG64:
    """`numpy.random.default_rng(seed_sequence)`'s bit generator, for `random()` draws."""

    def __init__(self, ss: SeedSequence):
        s0, s1, i0, i1 = ss.generate_state64(4)
        self.inc = ((((i0 << 64) | i1) << 1) | 1) & M128
        self.state = 0
        self._step()
        self.state = (self.state + ((s0 << 64) | s1)) & M128
        self._step()

    def _step(self) -> None:
        self.state = (self.state * PCG_MULT + self.inc) & M128

    def next64(self) -> int:
        self._step()
        x = ((self.state >> 64) ^ self.state) & M64
        rot = self.state >> 122
        return ((x >> rot) | (x << ((64 - rot) & 63))) & M64

    def random(self) -> float:
        """`Generator.random()`: 53 random bits as a float in [0, 1)."""
        return (self.next64() >> 11) * (1.0 / 9007199254740992.0)
