//! Addresses to frames: for a file-backed address, the function it lies
//! in and the functions inlined there; kernel addresses from
//! `/proc/kallsyms` (JIT code is named by `jit`, from the run's own
//! files). A frame no table names is kept, never dropped.
//!
//! A mapped file is named from, in this order (see `debuginfo` for where
//! each is looked for): its own `.symtab`, a debug file (build-id tree,
//! `.gnu_debuglink`, debuginfod), MiniDebugInfo, its `.dynsym`; DWARF (in
//! the binary or its debug file) adds the inlined frames and source files
//! (`dwarf`). An address no symbol covers is grouped by the unwind-table
//! range (`.eh_frame` FDE) it lies in, `gzip!fn@0x42f0`: one row per
//! function, never one per instruction; only an address no range covers
//! either is shown as `module+0xoffset`. Names are demangled (`demangle`).
//!
//! A module is read once per identity (build id, or device, inode and
//! modification time: `identity`) and shared by every process and path
//! that maps it; each address is resolved once. A file replaced since it
//! was mapped is symbolised from its debug file found by the build id that
//! ran, or shown as one unknown frame with a note, never with the new
//! file's symbols.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

use gimli::UnwindSection;
use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol, SymbolKind};

use super::debuginfo::{self, Search};
use super::demangle::{demangle, Scheme};
use super::dwarf::{self, Dwarf};
use super::identity::{self, FileId};

/// One function symbol: [start, start + size) in the file's virtual
/// addresses.
#[derive(Clone, Debug)]
struct Sym {
    start: u64,
    size: u64,
    name: String,
}

/// What names one module's addresses.
#[derive(Default)]
struct Table {
    /// Sorted by start.
    syms: Vec<Sym>,
    /// Unwind-table (FDE) ranges, sorted: [start, end).
    ranges: Vec<(u64, u64)>,
    /// Executable sections, sorted: [start, end) and name; read with the
    /// unwind ranges, to group the code no FDE covers.
    code: Vec<(u64, u64, String)>,
    /// PT_LOAD segments: (file offset, size in file, virtual address).
    segments: Vec<(u64, u64, u64)>,
    dwarf: Option<Dwarf>,
    scheme: Scheme,
    /// Every address is one unknown frame: the file was replaced.
    replaced: bool,
    /// Named from a debug file alone (the binary replaced), which keeps
    /// its binary's program headers but not their file offsets: the
    /// virtual address of the page where the executable segment starts,
    /// which is where the mapping of sampled code starts.
    code_page: Option<u64>,
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

    /// The start of the unwind-table range holding `vaddr`.
    fn range(&self, vaddr: u64) -> Option<u64> {
        let i = self.ranges.partition_point(|r| r.0 <= vaddr);
        let &(start, end) = self.ranges.get(i.checked_sub(1)?)?;
        (vaddr < end).then_some(start)
    }

    /// Code no unwind range covers (start-up stubs written in assembly,
    /// `.init`, `.fini`), named as one row per stretch between ranges so
    /// that it never becomes a row per instruction: the section's name
    /// when no range lies in it, else the section and the stretch's start.
    fn uncovered(&self, vaddr: u64) -> Option<String> {
        let (start, end, section) = self
            .code
            .iter()
            .find(|(start, end, _)| (*start..*end).contains(&vaddr))?;
        let i = self.ranges.partition_point(|r| r.0 <= vaddr);
        let from = i
            .checked_sub(1)
            .map_or(*start, |j| self.ranges[j].1.max(*start));
        let to = self.ranges.get(i).map_or(*end, |r| r.0.min(*end));
        Some(if from == *start && to == *end {
            section.clone()
        } else {
            format!("{section}@0x{from:x}")
        })
    }

    fn vaddr(&self, offset: u64, pgoff: u64) -> Option<u64> {
        if let Some(page) = self.code_page {
            return Some(page + offset.checked_sub(pgoff)?);
        }
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

/// The function symbols, their names as written: they are demangled when
/// an address is resolved to them, a few hundred of a table's thousands.
/// Of several names for one address (glibc's aliases), the one a person
/// knows: sized, global before weak before local, fewer leading
/// underscores, shorter (`__libc_start_main`, not
/// `__libc_start_main_alias_2`), as perf chooses.
fn functions<'d: 'f, 'f>(symbols: impl Iterator<Item = object::Symbol<'d, 'f>>) -> Vec<Sym> {
    let mut ranked: Vec<(Sym, (bool, u8, usize, usize))> = symbols
        .filter(|s| s.kind() == SymbolKind::Text && s.address() != 0)
        .filter_map(|s| {
            let name = s.name().ok()?;
            let binding = if s.is_weak() {
                1
            } else if s.is_global() {
                0
            } else {
                2
            };
            let underscores = name.len() - name.trim_start_matches('_').len();
            let rank = (s.size() == 0, binding, underscores, name.len());
            Some((
                Sym {
                    start: s.address(),
                    size: s.size(),
                    name: name.to_string(),
                },
                rank,
            ))
        })
        .collect();
    ranked.sort_by(|(a, ra), (b, rb)| a.start.cmp(&b.start).then(ra.cmp(rb)));
    ranked.dedup_by(|b, a| a.0.start == b.0.start);
    ranked.into_iter().map(|(s, _)| s).collect()
}

fn segments(file: &object::File) -> Vec<(u64, u64, u64)> {
    file.segments()
        .map(|s| {
            let (off, size) = s.file_range();
            (off, size, s.address())
        })
        .collect()
}

/// The executable sections: [start, end) and name, sorted.
fn code_sections(file: &object::File) -> Vec<(u64, u64, String)> {
    let mut out: Vec<(u64, u64, String)> = file
        .sections()
        .filter(|s| s.kind() == object::SectionKind::Text && s.size() > 0)
        .filter_map(|s| {
            let name = s.name().ok()?.to_string();
            Some((s.address(), s.address() + s.size(), name))
        })
        .collect();
    out.sort_unstable();
    out
}

/// The [start, end) of every FDE in `.eh_frame`, sorted.
fn unwind_ranges(file: &object::File) -> Vec<(u64, u64)> {
    let Some(section) = file.section_by_name(".eh_frame") else {
        return Vec::new();
    };
    let Ok(data) = section.data() else {
        return Vec::new();
    };
    let endian = if file.is_little_endian() {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    };
    let mut bases = gimli::BaseAddresses::default().set_eh_frame(section.address());
    if let Some(text) = file.section_by_name(".text") {
        bases = bases.set_text(text.address());
    }
    if let Some(got) = file.section_by_name(".got") {
        bases = bases.set_got(got.address());
    }
    let eh = gimli::EhFrame::new(data, endian);
    let mut entries = eh.entries(&bases);
    let mut out = Vec::new();
    while let Ok(Some(entry)) = entries.next() {
        if let gimli::CieOrFde::Fde(partial) = entry {
            if let Ok(fde) = partial.parse(gimli::EhFrame::cie_from_offset) {
                if fde.len() > 0 {
                    out.push((fde.initial_address(), fde.initial_address() + fde.len()));
                }
            }
        }
    }
    out.sort_unstable();
    out
}

fn is_go(file: &object::File) -> bool {
    [".go.buildinfo", ".gopclntab", ".note.go.buildid"]
        .iter()
        .any(|n| file.section_by_name(n).is_some())
}

/// What was found for one module and where, in words: the one line the
/// report gives it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModuleInfo {
    pub path: String,
    pub build_id: Option<String>,
    /// Where function names came from, e.g. ".symtab",
    /// ".symtab of /usr/lib/debug/.build-id/ab/cd.debug (build-id tree)",
    /// "MiniDebugInfo", ".dynsym"; empty when none.
    pub symbols: Vec<String>,
    /// Where inlined frames and source files came from.
    pub dwarf: Option<String>,
    /// Addresses outside every symbol were grouped by `.eh_frame` ranges.
    pub unwind_ranges: bool,
    /// What else the user should know (replaced while profiled, a
    /// debuginfod server that could not be asked, where nothing was found).
    pub notes: Vec<String>,
}

/// A file read: its bytes, parsed on demand.
struct Read {
    data: dwarf::Bytes,
}

impl Read {
    fn open(path: &Path) -> Option<Read> {
        let data = dwarf::Bytes::read(path)?;
        object::File::parse(&*data).ok()?;
        Some(Read { data })
    }
    fn file(&self) -> object::File<'_> {
        // Parsed once already in `open`.
        object::File::parse(&*self.data).expect("parsed before")
    }
}

/// A `dwz` supplementary file named by `.gnu_debugaltlink`: its path as
/// written (relative to the debug file's directory when relative), else
/// by its build id.
fn supplementary(file: &object::File, debug_path: &Path, search: &Search) -> Option<dwarf::Bytes> {
    let (name, build_id) = file.gnu_debugaltlink().ok()??;
    let name = Path::new(std::str::from_utf8(name).ok()?);
    let by_name = debug_path.parent().map(|d| d.join(name));
    let by_id = search.by_build_id(build_id).map(|f| f.path);
    [by_name, by_id]
        .into_iter()
        .flatten()
        .find_map(|p| dwarf::Bytes::read(&p))
}

/// Reads a module: its tables and the one line of what was found where.
fn load_module(path: &str, id: FileId, search: &Search) -> (Table, ModuleInfo) {
    let mut info = ModuleInfo {
        path: path.to_string(),
        build_id: id.build_id_bytes().map(identity::hex),
        ..Default::default()
    };
    let binary = Read::open(Path::new(path));
    let meta = std::fs::metadata(path).ok();
    let on_disk_id = binary
        .as_ref()
        .and_then(|b| identity::elf_build_id(&b.file()));
    if info.build_id.is_none() {
        info.build_id = on_disk_id.as_deref().map(identity::hex);
    }
    if !id.matches(meta.as_ref(), on_disk_id.as_deref()) {
        return replaced(path, id, search, info);
    }
    let Some(binary) = binary else {
        info.notes.push("cannot be read as ELF".into());
        return (Table::default(), info);
    };
    let file = binary.file();
    let scheme = if is_go(&file) {
        Scheme::Go
    } else {
        Scheme::ByName
    };
    let mut table = Table {
        segments: segments(&file),
        scheme,
        ..Default::default()
    };
    let own = functions(file.symbols());
    let has_own_dwarf = dwarf::has_dwarf(&file);
    // A debug file, where the binary lacks symbols or DWARF.
    let debug = if own.is_empty() || !has_own_dwarf {
        find_debug_file(
            &file,
            Path::new(path),
            on_disk_id.as_deref(),
            search,
            &mut info,
        )
    } else {
        None
    };
    let mut syms = own;
    if !syms.is_empty() {
        info.symbols.push(".symtab".into());
    }
    if has_own_dwarf {
        table.dwarf = Dwarf::load(&file, &binary.data, Path::new(path), None);
        if table.dwarf.is_some() {
            info.dwarf = Some("in the binary".into());
        }
    }
    if let Some((found, read)) = &debug {
        let dfile = read.file();
        if syms.is_empty() {
            syms = functions(dfile.symbols());
            if !syms.is_empty() {
                info.symbols.push(format!(
                    ".symtab of {} ({})",
                    found.path.display(),
                    found.how
                ));
            }
        }
        if table.dwarf.is_none() {
            let sup = supplementary(&dfile, &found.path, search);
            table.dwarf = Dwarf::load(&dfile, &read.data, Path::new(path), sup.as_ref());
            if table.dwarf.is_some() {
                info.dwarf = Some(format!("{} ({})", found.path.display(), found.how));
            }
        }
    }
    if syms.is_empty() {
        if let Some(mini) = debuginfo::mini_debuginfo(&file) {
            if let Ok(mfile) = object::File::parse(&*mini) {
                syms = functions(mfile.symbols());
                if !syms.is_empty() {
                    info.symbols.push("MiniDebugInfo (.gnu_debugdata)".into());
                }
            }
        }
    }
    // With a full symbol table, an address no symbol covers is padding:
    // the unwind tables are read only where names are missing.
    let full_table = !syms.is_empty();
    let dynamic = functions(file.dynamic_symbols());
    if !dynamic.is_empty() {
        info.symbols.push(".dynsym".into());
        syms.extend(dynamic);
    }
    sort_and_dedup(&mut syms);
    table.syms = syms;
    if !full_table {
        table.ranges = unwind_ranges(&file);
        table.code = code_sections(&file);
        info.unwind_ranges = !table.ranges.is_empty();
    }
    (table, info)
}

/// The debug file of a binary, looked for in order; what was tried and
/// not found goes into the module's notes when nothing is.
fn find_debug_file(
    file: &object::File,
    binary: &Path,
    build_id: Option<&[u8]>,
    search: &Search,
    info: &mut ModuleInfo,
) -> Option<(debuginfo::Found, Read)> {
    let mut tried: Vec<String> = Vec::new();
    let readable = |f: debuginfo::Found| Read::open(&f.path).map(|r| (f, r));
    if let Some(id) = build_id {
        if let Some(found) = search.by_build_id(id).and_then(readable) {
            return Some(found);
        }
        tried.push("build-id tree".into());
    }
    if let Some((name, crc)) = debuginfo::debuglink(file) {
        if let Some(found) = search.by_debuglink(binary, &name, crc).and_then(readable) {
            return Some(found);
        }
        tried.push(format!(".gnu_debuglink {name}"));
    }
    if let Some(id) = build_id {
        match search.by_debuginfod(id) {
            Ok(Some(found)) => {
                // What a server sent must be the debug file of this build.
                match Read::open(&found.path) {
                    Some(r) if identity::elf_build_id(&r.file()).as_deref() == Some(id) => {
                        return Some((found, r));
                    }
                    _ => info.notes.push(format!(
                        "debuginfod sent {} which is not this build's debug file",
                        found.path.display()
                    )),
                }
            }
            Ok(None) if search.debuginfod().is_some() => tried.push("debuginfod".into()),
            Ok(None) => {}
            Err(why) => info
                .notes
                .push(format!("debuginfod could not be asked: {why}")),
        }
    }
    if !tried.is_empty() {
        info.notes
            .push(format!("no debug file ({})", tried.join(", ")));
    }
    None
}

/// A file replaced since it was mapped: its debug file by the build id
/// that ran gives its names, else every address is one unknown frame.
fn replaced(path: &str, id: FileId, search: &Search, mut info: ModuleInfo) -> (Table, ModuleInfo) {
    let debug = id.build_id_bytes().and_then(|b| {
        search
            .by_build_id(b)
            .or_else(|| search.by_debuginfod(b).ok().flatten())
            .and_then(|f| Read::open(&f.path).map(|r| (f, r)))
            .filter(|(_, r)| identity::elf_build_id(&r.file()).as_deref() == Some(b))
    });
    let Some((found, read)) = debug else {
        info.notes.push(
            "replaced while it was profiled, and no debug file of the build that ran was found: its frames are shown as unknown".into(),
        );
        return (
            Table {
                replaced: true,
                ..Default::default()
            },
            info,
        );
    };
    let file = read.file();
    let scheme = if is_go(&file) {
        Scheme::Go
    } else {
        Scheme::ByName
    };
    let mut syms = functions(file.symbols());
    sort_and_dedup(&mut syms);
    let sup = supplementary(&file, &found.path, search);
    // The executable segment: sampled code lies in its mapping.
    let code_page = file
        .segments()
        .find(|s| {
            matches!(s.flags(), object::SegmentFlags::Elf { p_flags, .. } if p_flags.contains(object::elf::PF_X))
        })
        .map(|s| s.address() & !0xfff);
    let table = Table {
        syms,
        code_page: Some(code_page.unwrap_or(0)),
        dwarf: Dwarf::load(&file, &read.data, Path::new(path), sup.as_ref()),
        scheme,
        ..Default::default()
    };
    info.notes.push(format!(
        "replaced while it was profiled: named from the debug file of the build that ran, {} ({})",
        found.path.display(),
        found.how
    ));
    info.symbols
        .push(format!(".symtab of {}", found.path.display()));
    if table.dwarf.is_some() {
        info.dwarf = Some(format!("{} ({})", found.path.display(), found.how));
    }
    (table, info)
}

/// The last path component, as modules are shown.
pub fn short_module(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// One resolved frame.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Frame {
    pub function: String,
    /// The module's file name (`libc.so.6`, `[kernel]`, `[jit]`).
    pub module: String,
    /// The function's source file, from DWARF.
    pub file: Option<String>,
}

/// Names addresses, reading each module once.
pub struct Symbolizer {
    search: Search,
    tables: Vec<Table>,
    infos: Vec<ModuleInfo>,
    /// Modules by path, then identity.
    by_key: HashMap<String, Vec<(FileId, usize)>>,
    by_build_id: HashMap<Vec<u8>, usize>,
    /// Each address resolved once: (module, file offset) → frames.
    resolved: HashMap<(usize, u64), Vec<Frame>>,
    kernel: Option<Vec<Sym>>,
}

impl Default for Symbolizer {
    /// Debug directories and debuginfod as the environment says.
    fn default() -> Symbolizer {
        Symbolizer {
            search: Search::from_env(),
            tables: Vec::new(),
            infos: Vec::new(),
            by_key: HashMap::new(),
            by_build_id: HashMap::new(),
            resolved: HashMap::new(),
            kernel: None,
        }
    }
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

impl Symbolizer {
    fn kernel_frame(&mut self, addr: u64) -> Frame {
        let syms = self.kernel.get_or_insert_with(read_kallsyms);
        let i = syms.partition_point(|s| s.start <= addr);
        // Without kallsyms (hidden from this user) the kernel is one frame,
        // never a row per address.
        let function = match i.checked_sub(1).and_then(|j| syms.get(j)) {
            Some(s) => s.name.clone(),
            None => "[kernel]".into(),
        };
        Frame {
            function,
            module: "[kernel]".into(),
            file: None,
        }
    }

    /// Names one address: kernel, file-backed, or module+offset.
    /// Innermost first: every frame but the last is a function inlined
    /// into the one after it; the last is the function the code is in.
    pub fn frames(
        &mut self,
        addr: u64,
        kernel: bool,
        mapped: Option<&super::sampler::Mapped>,
    ) -> Cow<'_, [Frame]> {
        if kernel {
            return Cow::Owned(vec![self.kernel_frame(addr)]);
        }
        // JIT code (perf maps, jitdumps) is named before this, by
        // `jit::JitCode`, from the files of the run that sampled it.
        let Some(m) = mapped else {
            return Cow::Owned(vec![Frame {
                function: format!("[unknown]+0x{addr:x}"),
                module: "[unknown]".into(),
                file: None,
            }]);
        };
        let vdso = if m.path == "[vdso]" {
            self.vdso()
        } else {
            None
        };
        if vdso.is_none() && !m.path.starts_with('/') {
            // [anon:...], //anon: JIT code no runtime named.
            let module = m.path.clone();
            return Cow::Owned(vec![Frame {
                function: format!("{module}+0x{:x}", m.offset),
                module,
                file: None,
            }]);
        }
        // A file unlinked (replaced) before it was mapped: its identity
        // tells whether the file now at the path is the one.
        let path = m.path.strip_suffix(" (deleted)").unwrap_or(&m.path);
        let index = match vdso {
            Some(i) => i,
            None => self.module(path, m.file),
        };
        Cow::Borrowed(
            self.resolved
                .entry((index, m.offset))
                .or_insert_with(|| resolve(&self.tables[index], path, m)),
        )
    }

    /// The module mapped from `path` with identity `id`, read on first use.
    fn module(&mut self, path: &str, id: FileId) -> usize {
        let known = self
            .by_key
            .get(path)
            .and_then(|v| v.iter().find(|(k, _)| *k == id).map(|&(_, i)| i));
        if let Some(i) = known {
            return i;
        }
        let shared = id
            .build_id_bytes()
            .and_then(|b| self.by_build_id.get(b).copied());
        let i = shared.unwrap_or_else(|| {
            let (table, info) = load_module(path, id, &self.search);
            self.tables.push(table);
            self.infos.push(info);
            let i = self.tables.len() - 1;
            if let Some(b) = id.build_id_bytes() {
                self.by_build_id.insert(b.to_vec(), i);
            }
            i
        });
        self.by_key
            .entry(path.to_string())
            .or_default()
            .push((id, i));
        i
    }

    /// The vDSO's table: the kernel maps the same image into every
    /// process, so cmdscope reads its own.
    fn vdso(&mut self) -> Option<usize> {
        if let Some(&(_, i)) = self.by_key.get("[vdso]").and_then(|v| v.first()) {
            return Some(i);
        }
        let data = own_vdso()?;
        let file = object::File::parse(&*data).ok()?;
        let mut syms = functions(file.dynamic_symbols());
        sort_and_dedup(&mut syms);
        self.tables.push(Table {
            syms,
            segments: segments(&file),
            ranges: unwind_ranges(&file),
            code: code_sections(&file),
            ..Default::default()
        });
        self.infos.push(ModuleInfo {
            path: "[vdso]".into(),
            build_id: identity::elf_build_id(&file).map(|b| identity::hex(&b)),
            symbols: vec![".dynsym".into()],
            ..Default::default()
        });
        let i = self.tables.len() - 1;
        self.by_key
            .insert("[vdso]".into(), vec![(FileId::Unknown, i)]);
        Some(i)
    }

    /// What was found for every module read, by path.
    pub fn modules(&self) -> Vec<ModuleInfo> {
        let mut v = self.infos.clone();
        v.sort_by(|a, b| a.path.cmp(&b.path));
        v
    }
}

/// A copy of this process's vDSO image, found in `/proc/self/maps`.
fn own_vdso() -> Option<Vec<u8>> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let line = maps.lines().find(|l| l.ends_with("[vdso]"))?;
    let (start, end) = line.split_whitespace().next()?.split_once('-')?;
    let start = usize::from_str_radix(start, 16).ok()?;
    let end = usize::from_str_radix(end, 16).ok()?;
    if end <= start || end - start > 1 << 20 {
        return None;
    }
    // SAFETY: the kernel keeps the vDSO mapped readable for the whole life
    // of the process, at the range /proc/self/maps gives.
    let image = unsafe { std::slice::from_raw_parts(start as *const u8, end - start) };
    Some(image.to_vec())
}

/// The frames of one file offset in a module (see `Symbolizer::frames`).
fn resolve(table: &Table, path: &str, m: &super::sampler::Mapped) -> Vec<Frame> {
    let offset = m.offset;
    let module = short_module(path).to_string();
    let frame = |function: String, file: Option<String>| Frame {
        function,
        module: module.clone(),
        file,
    };
    if table.replaced {
        return vec![frame(format!("[{module}: replaced while profiled]"), None)];
    }
    let Some(vaddr) = table.vaddr(offset, m.pgoff) else {
        return vec![frame(format!("{module}+0x{offset:x}"), None)];
    };
    let inline = table
        .dwarf
        .as_ref()
        .map(|d| d.frames(vaddr))
        .unwrap_or_default();
    // The function the code is in: its symbol, else DWARF's name, else
    // the unwind-table range, else the offset.
    let outer = inline.last();
    let name = table
        .lookup(vaddr)
        .map(|n| demangle(n, table.scheme))
        .or_else(|| {
            outer
                .and_then(|f| f.name.as_deref())
                .map(|n| demangle(n, table.scheme))
        })
        .or_else(|| table.range(vaddr).map(|s| format!("{module}!fn@0x{s:x}")))
        .or_else(|| {
            (!table.ranges.is_empty())
                .then(|| table.uncovered(vaddr))
                .flatten()
                .map(|s| format!("{module}!{s}"))
        })
        .unwrap_or_else(|| format!("{module}+0x{offset:x}"));
    let mut out: Vec<Frame> = inline
        .iter()
        .take(inline.len().saturating_sub(1))
        .filter_map(|f| {
            let n = f.name.as_deref()?;
            Some(frame(demangle(n, table.scheme), f.file.clone()))
        })
        .collect();
    out.push(frame(name, outer.and_then(|f| f.file.clone())));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn without_symbols_an_address_is_named_by_its_unwind_range() {
        let t = Table {
            syms: vec![Sym {
                start: 0x1000,
                size: 0x10,
                name: "exported".into(),
            }],
            ranges: vec![(0x1000, 0x1010), (0x1100, 0x1180), (0x1180, 0x1200)],
            code: vec![
                (0x800, 0x817, ".init".into()),
                (0x1000, 0x1400, ".text".into()),
            ],
            segments: vec![(0, 0x3000, 0)],
            ..Table::default()
        };
        let at = |offset| super::super::sampler::Mapped {
            path: "/usr/bin/gzip".into(),
            offset,
            ..Default::default()
        };
        let name = |off| resolve(&t, "/usr/bin/gzip", &at(off))[0].function.clone();
        assert_eq!(name(0x1004), "exported");
        // Every instruction of a function is one row.
        assert_eq!(name(0x1100), "gzip!fn@0x1100");
        assert_eq!(name(0x117f), "gzip!fn@0x1100");
        assert_eq!(name(0x1180), "gzip!fn@0x1180");
        // Code no range covers is one row per stretch between ranges, or
        // per section when no range lies in it.
        assert_eq!(name(0x1010), "gzip!.text@0x1010");
        assert_eq!(name(0x10ff), "gzip!.text@0x1010");
        assert_eq!(name(0x1300), "gzip!.text@0x1200");
        assert_eq!(name(0x13ff), "gzip!.text@0x1200");
        assert_eq!(name(0x810), "gzip!.init");
        // Outside every executable section: the offset.
        assert_eq!(name(0x1500), "gzip+0x1500");
        assert_eq!(name(0x5000), "gzip+0x5000");
    }

    #[test]
    fn a_replaced_file_is_one_unknown_frame() {
        let t = Table {
            replaced: true,
            ..Table::default()
        };
        let m = super::super::sampler::Mapped {
            path: "/tmp/prog".into(),
            offset: 0x42,
            ..Default::default()
        };
        let f = resolve(&t, "/tmp/prog", &m);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].function, "[prog: replaced while profiled]");
        assert_eq!(f[0].module, "prog");
    }
}
