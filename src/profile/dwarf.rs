//! Inlined frames and source lines from DWARF, with the `addr2line`
//! crate (gimli): for one address, the chain of functions inlined into
//! each other there, innermost first, each with its source file and line.
//! Sections may be compressed (SHF_COMPRESSED or `.zdebug_`, unpacked by
//! `object`); split DWARF is read from the `.dwo` files the skeleton units
//! name, or from a `.dwp` package beside the binary; a `dwz` supplementary
//! file (`.gnu_debugaltlink`, as Debian's debug packages have) is loaded
//! when it is found.
//!
//! Units are parsed lazily by addr2line, the first time an address in
//! them is asked for: a large binary costs what its sampled units cost.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use addr2line::{LookupContinuation, LookupResult};
use object::{Object, ObjectSection};

/// A file's bytes, read once and shared by every section reader over
/// them (the DWARF of a large binary is most of its size: never copied).
#[derive(Clone, Debug)]
pub struct Bytes(Rc<Vec<u8>>);

impl Bytes {
    pub fn read(path: &Path) -> Option<Bytes> {
        std::fs::read(path).ok().map(Bytes::from)
    }
}

impl From<Vec<u8>> for Bytes {
    fn from(v: Vec<u8>) -> Bytes {
        Bytes(Rc::new(v))
    }
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

// SAFETY: the bytes live in the Vec's heap buffer, which the Rc never
// moves or changes while any clone of it lives.
unsafe impl gimli::StableDeref for Bytes {}
// SAFETY: a clone shares the same buffer.
unsafe impl gimli::CloneStableDeref for Bytes {}

type R = gimli::EndianReader<gimli::RunTimeEndian, Bytes>;

/// One function of an address's inline chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InlineFrame {
    /// As DWARF names it: the linkage (mangled) name where there is one.
    pub name: Option<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
}

/// Split DWARF's other files, loaded when a unit asks for them.
struct Split {
    /// Where the binary is: `.dwo` paths may be relative to it, and a
    /// `.dwp` lies beside it.
    binary: PathBuf,
    dwp: Option<Option<gimli::DwarfPackage<R>>>,
    dwo: HashMap<u64, Option<Arc<gimli::Dwarf<R>>>>,
}

pub struct Dwarf {
    ctx: addr2line::Context<R>,
    split: RefCell<Split>,
}

fn endian(file: &object::File) -> gimli::RunTimeEndian {
    if file.is_little_endian() {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    }
}

/// One section of `file` (whose bytes are `data`): a range of those bytes,
/// or its unpacked copy when it is compressed; empty when the file lacks
/// it.
fn section(file: &object::File, data: &Bytes, name: Option<&str>) -> R {
    let endian = endian(file);
    let Some(s) = name.and_then(|n| file.section_by_name(n)) else {
        return gimli::EndianReader::new(Bytes::from(Vec::new()), endian);
    };
    let plain = s
        .compressed_data()
        .is_ok_and(|c| c.format == object::CompressionFormat::None);
    match s.file_range() {
        Some((off, size)) if plain && off.saturating_add(size) <= data.len() as u64 => {
            gimli::EndianReader::new(data.clone(), endian)
                .range(off as usize..(off + size) as usize)
        }
        _ => {
            let bytes = s
                .uncompressed_data()
                .map(|d| d.into_owned())
                .unwrap_or_default();
            gimli::EndianReader::new(Bytes::from(bytes), endian)
        }
    }
}

/// Whether a file has DWARF that can name functions.
pub fn has_dwarf(file: &object::File) -> bool {
    file.section_by_name(".debug_info")
        .is_some_and(|s| s.size() > 0)
}

impl Dwarf {
    /// The DWARF of `file` (the binary or its debug file); `binary` is the
    /// mapped file's path, for split DWARF; `sup` the supplementary file's
    /// contents, when there is one.
    pub fn load(
        file: &object::File,
        data: &Bytes,
        binary: &Path,
        sup: Option<&Bytes>,
    ) -> Option<Dwarf> {
        if !has_dwarf(file) {
            return None;
        }
        let mut dwarf: gimli::Dwarf<R> =
            gimli::Dwarf::load(|id| Ok::<_, ()>(section(file, data, Some(id.name())))).ok()?;
        if let Some(sup_data) = sup {
            if let Ok(sup) = object::File::parse(&**sup_data) {
                let _ = dwarf.load_sup(|id| Ok::<_, ()>(section(&sup, sup_data, Some(id.name()))));
            }
        }
        let ctx = addr2line::Context::from_dwarf(dwarf).ok()?;
        Some(Dwarf {
            ctx,
            split: RefCell::new(Split {
                binary: binary.to_path_buf(),
                dwp: None,
                dwo: HashMap::new(),
            }),
        })
    }

    /// The functions at `vaddr` (the file's virtual address), innermost
    /// inlined function first and the function the code belongs to last;
    /// empty when DWARF does not cover it.
    pub fn frames(&self, vaddr: u64) -> Vec<InlineFrame> {
        let mut lookup = self.ctx.find_frames(vaddr);
        let iter = loop {
            match lookup {
                LookupResult::Output(r) => break r,
                LookupResult::Load { load, continuation } => {
                    let dwo = self.split.borrow_mut().load(load);
                    lookup = continuation.resume(dwo);
                }
            }
        };
        let Ok(mut iter) = iter else {
            return Vec::new();
        };
        let mut out = Vec::new();
        while let Ok(Some(f)) = iter.next() {
            let name = f
                .function
                .as_ref()
                .and_then(|n| n.raw_name().ok())
                .map(|n| n.into_owned());
            let (file, line) = f
                .location
                .map_or((None, None), |l| (l.file.map(str::to_string), l.line));
            out.push(InlineFrame { name, file, line });
            if out.len() >= 64 {
                break;
            }
        }
        out
    }
}

impl Split {
    fn load(&mut self, load: addr2line::SplitDwarfLoad<R>) -> Option<Arc<gimli::Dwarf<R>>> {
        let id = load.dwo_id.0;
        if let Some(d) = self.dwo.get(&id) {
            return d.clone();
        }
        let d = self
            .in_package(&load)
            .or_else(|| self.in_dwo_file(&load))
            .map(Arc::new);
        self.dwo.insert(id, d.clone());
        d
    }

    /// `BINARY.dwp`, read once.
    fn in_package(&mut self, load: &addr2line::SplitDwarfLoad<R>) -> Option<gimli::Dwarf<R>> {
        let binary = self.binary.clone();
        let package = self.dwp.get_or_insert_with(|| {
            let mut name = binary.file_name()?.to_os_string();
            name.push(".dwp");
            let data = Bytes::read(&binary.with_file_name(name))?;
            let file = object::File::parse(&*data).ok()?;
            let empty = gimli::EndianReader::new(Bytes::from(Vec::new()), endian(&file));
            gimli::DwarfPackage::load(
                |id| Ok::<_, gimli::Error>(section(&file, &data, id.dwo_name())),
                empty,
            )
            .ok()
        });
        package
            .as_ref()?
            .find_cu(load.dwo_id, &load.parent)
            .ok()
            .flatten()
    }

    /// The `.dwo` the skeleton unit names: its path as written, else
    /// beside the binary.
    fn in_dwo_file(&self, load: &addr2line::SplitDwarfLoad<R>) -> Option<gimli::Dwarf<R>> {
        let text = |r: &Option<R>| {
            r.as_ref()
                .and_then(|r| gimli::Reader::to_string_lossy(r).ok())
                .map(|s| PathBuf::from(s.into_owned()))
        };
        let path = text(&load.path)?;
        let mut candidates = Vec::new();
        match text(&load.comp_dir) {
            Some(dir) if path.is_relative() => candidates.push(dir.join(&path)),
            _ => candidates.push(path.clone()),
        }
        if let (Some(dir), Some(name)) = (self.binary.parent(), path.file_name()) {
            candidates.push(dir.join(name));
        }
        candidates.into_iter().find_map(|p| {
            let data = Bytes::read(&p)?;
            let file = object::File::parse(&*data).ok()?;
            let mut dwarf: gimli::Dwarf<R> =
                gimli::Dwarf::load(|id| Ok::<_, ()>(section(&file, &data, id.dwo_name()))).ok()?;
            let header = dwarf.units().next().ok()??;
            let unit = dwarf.unit(header).ok()?;
            if unit.dwo_id != Some(load.dwo_id) {
                return None;
            }
            dwarf.make_dwo(&load.parent);
            Some(dwarf)
        })
    }
}
