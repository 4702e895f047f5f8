//! A sparse byte-addressed memory over the whole 64-bit address space.

use std::collections::HashMap;

const PAGE: u64 = 4096;

/// Sparse memory: 4 KiB pages allocated on first write; unwritten bytes read as zero.
#[derive(Debug, Default, Clone)]
pub struct Memory {
    pages: HashMap<u64, Box<[u8; PAGE as usize]>>,
}

impl Memory {
    /// An empty memory.
    pub fn new() -> Memory {
        Memory::default()
    }

    /// Reads one byte.
    #[inline]
    pub fn read_byte(&self, addr: u64) -> u8 {
        self.pages
            .get(&(addr / PAGE))
            .map_or(0, |p| p[(addr % PAGE) as usize])
    }

    /// Writes one byte.
    #[inline]
    pub fn write_byte(&mut self, addr: u64, b: u8) {
        self.page_mut(addr)[(addr % PAGE) as usize] = b;
    }

    fn page_mut(&mut self, addr: u64) -> &mut [u8; PAGE as usize] {
        self.pages
            .entry(addr / PAGE)
            .or_insert_with(|| Box::new([0; PAGE as usize]))
    }

    /// Reads the `bytes`-wide little-endian word at `base` (an AXI-Lite bus's word).
    pub fn read_word(&self, base: u64, bytes: usize) -> u64 {
        (0..bytes).fold(0, |acc, i| {
            acc | u64::from(self.read_byte(base.wrapping_add(i as u64))) << (8 * i)
        })
    }

    /// Writes the bytes of the `bytes`-wide little-endian word `data` at `base` whose bit in
    /// `strb` is set.
    pub fn write_word(&mut self, base: u64, bytes: usize, data: u64, strb: u64) {
        for i in 0..bytes {
            if strb >> i & 1 == 1 {
                self.write_byte(base.wrapping_add(i as u64), (data >> (8 * i)) as u8);
            }
        }
    }

    /// Reads `out.len()` bytes from `addr`; the address wraps at the top of the space.
    pub fn read(&self, addr: u64, out: &mut [u8]) {
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.read_byte(addr.wrapping_add(i as u64));
        }
    }

    /// Writes `data` at `addr`; the address wraps at the top of the space.
    pub fn write(&mut self, addr: u64, data: &[u8]) {
        let mut i = 0;
        while i < data.len() {
            let a = addr.wrapping_add(i as u64);
            let off = (a % PAGE) as usize;
            let n = (PAGE as usize - off).min(data.len() - i);
            self.page_mut(a)[off..off + n].copy_from_slice(&data[i..i + n]);
            i += n;
        }
    }

    /// Reads `len` bytes into a new vector.
    pub fn read_vec(&self, addr: u64, len: usize) -> Vec<u8> {
        let mut v = vec![0; len];
        self.read(addr, &mut v);
        v
    }

    /// How many 4 KiB pages hold data.
    pub fn pages(&self) -> usize {
        self.pages.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_across_pages_and_the_top_of_the_space() {
        let mut m = Memory::new();
        m.write(0xfff, &[1, 2, 3]);
        assert_eq!(m.read_vec(0xffe, 5), [0, 1, 2, 3, 0]);
        m.write(u64::MAX - 1, &[9, 8, 7]);
        assert_eq!(m.read_vec(u64::MAX - 1, 3), [9, 8, 7]);
        assert_eq!(m.read_byte(0), 7);
        assert_eq!(m.pages(), 3);
    }
}
