//! A bit-exact emulation of CPython's `random.Random` (Mersenne Twister MT19937), for the parts
//! the author's data generator and evaluators use: seeding with an int, `random()`,
//! `getrandbits`, `_randbelow`, `choices` (no weights), `choice`, `sample` (both the pool and the
//! set method, chosen exactly as CPython 3.11 does), `shuffle` and `randrange(n)`.
//!
//! Reference: CPython `Modules/_randommodule.c` and `Lib/random.py` (3.11; the routines used here
//! are unchanged in 3.12). Test vectors are in the tests below and in `tests/task_data.rs`.

const N: usize = 624;
const M: usize = 397;
const MATRIX_A: u32 = 0x9908_b0df;
const UPPER_MASK: u32 = 0x8000_0000;
const LOWER_MASK: u32 = 0x7fff_ffff;

#[derive(Clone)]
pub struct PyRandom {
    mt: [u32; N],
    mti: usize,
}

impl PyRandom {
    /// `random.Random(seed)` for an integer seed: `init_by_array` over the 32-bit little-endian
    /// words of `|seed|` (`[0]` for zero).
    pub fn new(seed: i64) -> Self {
        let mut x = seed.unsigned_abs();
        let mut key = Vec::new();
        while x > 0 {
            key.push(x as u32);
            x >>= 32;
        }
        if key.is_empty() {
            key.push(0);
        }
        Self::from_key(&key)
    }

    fn init_genrand(s: u32) -> Self {
        let mut mt = [0u32; N];
        mt[0] = s;
        for i in 1..N {
            mt[i] = 1_812_433_253u32.wrapping_mul(mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_add(i as u32);
        }
        PyRandom { mt, mti: N }
    }

    /// `init_by_array(init_key)`.
    pub fn from_key(key: &[u32]) -> Self {
        let mut r = Self::init_genrand(19_650_218);
        let mt = &mut r.mt;
        let (mut i, mut j) = (1usize, 0usize);
        let klen = key.len();
        for _ in 0..N.max(klen) {
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                mt[0] = mt[N - 1];
                i = 1;
            }
            if j >= klen {
                j = 0;
            }
        }
        for _ in 0..N - 1 {
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1_566_083_941)).wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                mt[0] = mt[N - 1];
                i = 1;
            }
        }
        mt[0] = 0x8000_0000;
        r
    }

    /// `genrand_uint32()`.
    pub fn genrand_u32(&mut self) -> u32 {
        if self.mti >= N {
            for kk in 0..N {
                let y = (self.mt[kk] & UPPER_MASK) | (self.mt[(kk + 1) % N] & LOWER_MASK);
                let mag = if y & 1 == 1 { MATRIX_A } else { 0 };
                self.mt[kk] = self.mt[(kk + M) % N] ^ (y >> 1) ^ mag;
            }
            self.mti = 0;
        }
        let mut y = self.mt[self.mti];
        self.mti += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^= y >> 18;
        y
    }

    /// `random()`: a 53-bit float in [0, 1).
    pub fn random(&mut self) -> f64 {
        let a = (self.genrand_u32() >> 5) as f64;
        let b = (self.genrand_u32() >> 6) as f64;
        (a * 67_108_864.0 + b) * (1.0 / 9_007_199_254_740_992.0)
    }

    /// `getrandbits(k)` for `k ≤ 64`. For `k > 32` CPython fills 32-bit words from the least
    /// significant end, and the last (most significant) word keeps its top `k mod 32` bits.
    pub fn getrandbits(&mut self, k: u32) -> u64 {
        assert!(k <= 64, "getrandbits: k > 64 not needed here");
        if k == 0 {
            return 0;
        }
        if k <= 32 {
            return (self.genrand_u32() >> (32 - k)) as u64;
        }
        let mut out = 0u64;
        let mut remaining = k;
        let mut shift = 0;
        while remaining > 0 {
            let mut r = self.genrand_u32();
            if remaining < 32 {
                r >>= 32 - remaining;
            }
            out |= (r as u64) << shift;
            shift += 32;
            remaining = remaining.saturating_sub(32);
        }
        out
    }

    /// `_randbelow(n)` (getrandbits rejection method): `k = n.bit_length()`, redraw while `r ≥ n`.
    pub fn randbelow(&mut self, n: u64) -> u64 {
        assert!(n > 0, "randbelow(0)");
        let k = 64 - n.leading_zeros();
        loop {
            let r = self.getrandbits(k);
            if r < n {
                return r;
            }
        }
    }

    /// `randrange(n)` with one argument.
    pub fn randrange(&mut self, n: u64) -> u64 {
        self.randbelow(n)
    }

    /// `choice(seq)`.
    pub fn choice<'a, T>(&mut self, seq: &'a [T]) -> &'a T {
        &seq[self.randbelow(seq.len() as u64) as usize]
    }

    /// `choices(population, k=k)` without weights: `population[floor(random() * n)]`, k times.
    pub fn choices<T: Clone>(&mut self, population: &[T], k: usize) -> Vec<T> {
        let n = population.len() as f64;
        (0..k).map(|_| population[(self.random() * n) as usize].clone()).collect()
    }

    /// `sample(population, k)`, choosing between the pool and the set method exactly as CPython.
    pub fn sample<T: Clone>(&mut self, population: &[T], k: usize) -> Vec<T> {
        let n = population.len();
        assert!(k <= n, "sample larger than population");
        let mut setsize = 21usize;
        if k > 5 {
            // 4 ** ceil(log(3k, 4)); 3k is never a power of 4, so this is the smallest 4^m > 3k.
            let mut p = 1usize;
            while p <= 3 * k {
                p *= 4;
            }
            setsize += p;
        }
        let mut result = Vec::with_capacity(k);
        if n <= setsize {
            let mut pool: Vec<T> = population.to_vec();
            for i in 0..k {
                let j = self.randbelow((n - i) as u64) as usize;
                result.push(pool[j].clone());
                pool[j] = pool[n - i - 1].clone();
            }
        } else {
            let mut selected = std::collections::BTreeSet::new();
            for _ in 0..k {
                let mut j = self.randbelow(n as u64) as usize;
                while selected.contains(&j) {
                    j = self.randbelow(n as u64) as usize;
                }
                selected.insert(j);
                result.push(population[j].clone());
            }
        }
        result
    }

    /// `shuffle(x)`: `for i in reversed(range(1, len(x))): j = _randbelow(i+1); swap`.
    pub fn shuffle<T>(&mut self, x: &mut [T]) {
        for i in (1..x.len()).rev() {
            let j = self.randbelow(i as u64 + 1) as usize;
            x.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_seed_42_matches_cpython() {
        // python3 -c "import random; r=random.Random(42); print([r.random() for _ in range(3)])"
        let mut r = PyRandom::new(42);
        assert_eq!(r.random(), 0.6394267984578837);
        assert_eq!(r.random(), 0.025010755222666936);
        assert_eq!(r.random(), 0.27502931836911926);
    }

    #[test]
    fn getrandbits_and_randbelow_match_cpython() {
        // r=random.Random(0); [r.getrandbits(k) for k in (1,7,32,33,64)]
        let mut r = PyRandom::new(0);
        let got: Vec<u64> = [1, 7, 32, 33, 64].iter().map(|&k| r.getrandbits(k)).collect();
        assert_eq!(got, vec![1, 49, 3_255_389_356, 3_823_568_514, 4_776_171_008_201_404_212]);
        // r=random.Random(7); [r.randrange(10) for _ in range(8)]
        let mut r = PyRandom::new(7);
        let got: Vec<u64> = (0..8).map(|_| r.randrange(10)).collect();
        assert_eq!(got, vec![5, 2, 6, 0, 1, 8, 1, 5]);
    }

    #[test]
    fn multiword_and_negative_seeds_match_cpython() {
        // random.Random(2**40+5).random(); random.Random(-3).random()
        assert_eq!(PyRandom::new((1 << 40) + 5).random(), 0.5043802970418443);
        assert_eq!(PyRandom::new(-3).random(), 0.23796462709189137);
    }

    #[test]
    fn sample_shuffle_choices_match_cpython() {
        // r=random.Random(1); r.sample(range(36),10) (pool), r.sample(range(36),3) (set),
        // r.sample(range(1000),32)[:5] (set)
        let mut r = PyRandom::new(1);
        let pop36: Vec<u32> = (0..36).collect();
        assert_eq!(r.sample(&pop36, 10), vec![8, 4, 16, 7, 31, 24, 14, 15, 20, 12]);
        assert_eq!(r.sample(&pop36, 3), vec![13, 6, 31]);
        let pop1000: Vec<u32> = (0..1000).collect();
        assert_eq!(r.sample(&pop1000, 32)[..5], [29, 914, 855, 399, 443]);
        // r=random.Random(5); x=list(range(10)); r.shuffle(x)
        let mut r = PyRandom::new(5);
        let mut x: Vec<u32> = (0..10).collect();
        r.shuffle(&mut x);
        assert_eq!(x, vec![2, 3, 1, 0, 8, 7, 6, 5, 4, 9]);
        // r=random.Random(9); r.choices('abc', k=6), r.choice([10,20,30])
        let mut r = PyRandom::new(9);
        assert_eq!(r.choices(&['a', 'b', 'c'], 6), vec!['b', 'b', 'a', 'c', 'a', 'b']);
        assert_eq!(*r.choice(&[10, 20, 30]), 30);
    }
}
