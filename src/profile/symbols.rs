//! Addresses to function names: ELF symbol tables (`.symtab`, else
//! `.dynsym`) read with the `object` crate, Rust names demangled with
//! `rustc-demangle`, kernel addresses from `/proc/kallsyms`, JIT code from
//! the `/tmp/perf-PID.map` files runtimes write. A frame no table names is
//! kept as `module+0xoffset`, never dropped.
//!
//! Reading a binary costs one pass over its symbol table; files are read
//! once per session and kept.

use std::collections::HashMap;

use object::{Object, ObjectSegment, ObjectSymbol, SymbolKind};

/// One function symbol: [start, start + size) in the file's virtual
/// addresses.
#[derive(Clone, Debug)]
struct Sym {
    start: u64,
    size: u64,
    name: String,
}

#[derive(Default)]
struct Table {
    /// Sorted by start.
    syms: Vec<Sym>,
    /// PT_LOAD segments: (file offset, size in file, virtual address).
    segments: Vec<(u64, u64, u64)>,
    /// The file could be read as ELF.
    readable: bool,
}

impl Table {
    fn lookup(&self, vaddr: u64) -> Option<&str> {
        let i = self.syms.partition_point(|s| s.start <= vaddr);
        let s = self.syms.get(i.checked_sub(1)?)?;
        // A symbol of size 0 (hand-written assembly) covers up to the next.
        let end = if s.size > 0 {
            s.start + s.size
        } else {
            self.syms.get(i).map_or(u64::MAX, |n| n.start)
        };
        (vaddr < end).then_some(s.name.as_str())
    }

    fn vaddr(&self, offset: u64) -> Option<u64> {
        self.segments
            .iter()
            .find(|&&(off, size, _)| off <= offset && offset < off + size)
            .map(|&(off, _, va)| offset - off + va)
    }
}

fn sort_and_dedup(syms: &mut Vec<Sym>) {
    syms.sort_by(|a, b| a.start.cmp(&b.start).then(b.size.cmp(&a.size)));
    syms.dedup_by(|b, a| a.start == b.start);
}

fn functions<'d: 'f, 'f>(symbols: impl Iterator<Item = object::Symbol<'d, 'f>>) -> Vec<Sym> {
    symbols
        .filter(|s| s.kind() == SymbolKind::Text && s.address() != 0)
        .filter_map(|s| {
            Some(Sym {
                start: s.address(),
                size: s.size(),
                name: demangle(s.name().ok()?),
            })
        })
        .collect()
}

fn read_table(path: &str) -> Table {
    let Ok(data) = std::fs::read(path) else {
        return Table::default();
    };
    let Ok(file) = object::File::parse(&*data) else {
        return Table::default();
    };
    let mut syms = functions(file.symbols());
    if syms.is_empty() {
        syms = functions(file.dynamic_symbols());
    }
    sort_and_dedup(&mut syms);
    let segments = file
        .segments()
        .map(|s| {
            let (off, size) = s.file_range();
            (off, size, s.address())
        })
        .collect();
    Table {
        syms,
        segments,
        readable: true,
    }
}

/// Rust's mangled names (legacy and v0) demangled without their hash;
/// C and Go names are kept as they are.
pub fn demangle(name: &str) -> String {
    match rustc_demangle::try_demangle(name) {
        Ok(d) => format!("{d:#}"),
        Err(_) => name.to_string(),
    }
}

/// The last path component, as modules are shown.
pub fn short_module(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// One resolved frame.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Frame {
    pub function: String,
    /// The module's file name (`libc.so.6`, `[kernel]`, `[jit]`).
    pub module: String,
}

#[derive(Default)]
pub struct Symbolizer {
    tables: HashMap<String, Table>,
    kernel: Option<Vec<Sym>>,
    jit: HashMap<u32, Vec<Sym>>,
    /// Modules whose file could not be read or had no symbols.
    pub unreadable: Vec<String>,
}

fn read_kallsyms() -> Vec<Sym> {
    let text = std::fs::read_to_string("/proc/kallsyms").unwrap_or_default();
    let mut syms: Vec<Sym> = text
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let addr = u64::from_str_radix(it.next()?, 16).ok()?;
            let kind = it.next()?;
            let name = it.next()?;
            (addr != 0 && matches!(kind, "t" | "T" | "w" | "W")).then(|| Sym {
                start: addr,
                size: 0,
                name: name.to_string(),
            })
        })
        .collect();
    sort_and_dedup(&mut syms);
    syms
}

/// `/tmp/perf-PID.map`: `START SIZE name` in hex, one symbol a line.
pub fn parse_perf_map(text: &str) -> Vec<(u64, u64, String)> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.splitn(3, ' ');
            let start = u64::from_str_radix(it.next()?.trim_start_matches("0x"), 16).ok()?;
            let size = u64::from_str_radix(it.next()?.trim_start_matches("0x"), 16).ok()?;
            Some((start, size, it.next()?.trim().to_string()))
        })
        .collect()
}

impl Symbolizer {
    fn kernel_frame(&mut self, addr: u64) -> Frame {
        let syms = self.kernel.get_or_insert_with(read_kallsyms);
        let i = syms.partition_point(|s| s.start <= addr);
        let function = match i.checked_sub(1).and_then(|j| syms.get(j)) {
            Some(s) => s.name.clone(),
            None => format!("[kernel]+0x{addr:x}"),
        };
        Frame {
            function,
            module: "[kernel]".into(),
        }
    }

    fn jit_frame(&mut self, pid: u32, addr: u64) -> Option<Frame> {
        let syms = self.jit.entry(pid).or_insert_with(|| {
            let text = std::fs::read_to_string(format!("/tmp/perf-{pid}.map")).unwrap_or_default();
            let mut syms: Vec<Sym> = parse_perf_map(&text)
                .into_iter()
                .map(|(start, size, name)| Sym { start, size, name })
                .collect();
            sort_and_dedup(&mut syms);
            syms
        });
        let i = syms.partition_point(|s| s.start <= addr);
        let s = syms.get(i.checked_sub(1)?)?;
        (addr < s.start + s.size.max(1)).then(|| Frame {
            function: s.name.clone(),
            module: "[jit]".into(),
        })
    }

    /// Names one frame: kernel, file-backed, JIT, or module+offset.
    pub fn frame(
        &mut self,
        pid: u32,
        addr: u64,
        kernel: bool,
        mapped: Option<&(String, u64)>,
    ) -> Frame {
        if kernel {
            return self.kernel_frame(addr);
        }
        let Some((path, offset)) = mapped else {
            return self.jit_frame(pid, addr).unwrap_or_else(|| Frame {
                function: format!("[unknown]+0x{addr:x}"),
                module: "[unknown]".into(),
            });
        };
        if !path.starts_with('/') {
            // [vdso], [anon:...], //anon: JIT code lives in anonymous memory.
            if let Some(f) = self.jit_frame(pid, addr) {
                return f;
            }
            let module = path.clone();
            return Frame {
                function: format!("{module}+0x{offset:x}"),
                module,
            };
        }
        if !self.tables.contains_key(path) {
            let t = read_table(path);
            if !t.readable || t.syms.is_empty() {
                self.unreadable.push(path.clone());
            }
            self.tables.insert(path.clone(), t);
        }
        let module = short_module(path).to_string();
        let table = &self.tables[path];
        let name = table
            .vaddr(*offset)
            .and_then(|va| table.lookup(va))
            .map(str::to_string);
        Frame {
            function: name.unwrap_or_else(|| format!("{module}+0x{offset:x}")),
            module,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_names_lose_their_hash_and_c_names_stay() {
        assert_eq!(
            demangle("_ZN4core3fmt5write17h0123456789abcdefE"),
            "core::fmt::write"
        );
        assert_eq!(demangle("extra_work_b"), "extra_work_b");
        assert_eq!(demangle("main.hot"), "main.hot");
    }

    #[test]
    fn perf_maps_are_read_as_runtimes_write_them() {
        let m = parse_perf_map("7f00a000 40 py::hot:/x.py\n0x10 0x8 LazyCompile:*f a.js\nbad\n");
        assert_eq!(m[0], (0x7f00a000, 0x40, "py::hot:/x.py".to_string()));
        assert_eq!(m[1], (0x10, 0x8, "LazyCompile:*f a.js".to_string()));
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn a_symbol_covers_its_size_only() {
        let t = Table {
            syms: vec![
                Sym {
                    start: 0x100,
                    size: 0x10,
                    name: "a".into(),
                },
                Sym {
                    start: 0x200,
                    size: 0,
                    name: "b".into(),
                },
            ],
            ..Table::default()
        };
        assert_eq!(t.lookup(0x108), Some("a"));
        assert_eq!(t.lookup(0x110), None);
        assert_eq!(t.lookup(0x250), Some("b"));
        assert_eq!(t.lookup(0x50), None);
    }
}
