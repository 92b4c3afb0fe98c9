//! DWARF unwinding of user stacks copied by the kernel with each sample
//! (`PERF_SAMPLE_REGS_USER` + `PERF_SAMPLE_STACK_USER`, as
//! `perf record --call-graph dwarf` does), with the framehop crate: the
//! `.eh_frame` (or `.debug_frame`) of every mapped module says where each
//! function keeps its return address, so binaries built without frame
//! pointers (C and Rust release builds) still show their callers. Where a
//! module has no unwind information framehop falls back to frame pointers,
//! and so it does for code no module covers (JIT code); code a jitdump
//! gives an unwind table (`jit::parse`) is unwound with that table.

use std::collections::HashMap;
use std::ops::{Deref, Range};
use std::sync::Arc;

use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{ExplicitModuleSectionInfo, Module, Unwinder};
use object::{Object, ObjectSection, ObjectSegment};

/// A mapping of a file into a process, from MMAP/MMAP2 records.
#[derive(Clone, Debug)]
pub struct Mapping {
    pub start: u64,
    pub end: u64,
    pub pgoff: u64,
    pub path: String,
    /// Which file it was when mapped.
    pub file: super::identity::FileId,
}

/// A section of a file read once and shared by every process mapping it.
#[derive(Clone, Default)]
pub struct Slice {
    data: Arc<Vec<u8>>,
    range: Range<usize>,
}

impl Deref for Slice {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.data[self.range.clone()]
    }
}

/// What framehop needs of one ELF file.
struct FileInfo {
    /// PT_LOAD segments: (file offset, size in file, virtual address).
    segments: Vec<(u64, u64, u64)>,
    sections: HashMap<&'static str, (Range<u64>, Slice)>,
}

/// The unwind tables of the file mapped, or None when the file at `path`
/// is no longer the one that was (replaced while profiled): its tables
/// would unwind another program.
fn read_file_info(path: &str, id: super::identity::FileId) -> Option<FileInfo> {
    let meta = std::fs::metadata(path).ok();
    let data = Arc::new(std::fs::read(path).ok()?);
    let file = object::File::parse(&**data).ok()?;
    if !id.matches(
        meta.as_ref(),
        super::identity::elf_build_id(&file).as_deref(),
    ) {
        return None;
    }
    let segments = file
        .segments()
        .map(|s| {
            let (off, size) = s.file_range();
            (off, size, s.address())
        })
        .collect();
    let mut sections = HashMap::new();
    for name in [
        ".text",
        ".eh_frame",
        ".eh_frame_hdr",
        ".debug_frame",
        ".got",
    ] {
        let Some(s) = file.section_by_name(name) else {
            continue;
        };
        let svma = s.address()..s.address() + s.size();
        let bytes = match s.file_range() {
            Some((off, size))
                if s.compressed_data()
                    .is_ok_and(|c| c.format == object::CompressionFormat::None) =>
            {
                (off as usize)..(off + size) as usize
            }
            _ => 0..0,
        };
        if bytes.end <= data.len() {
            sections.insert(
                name,
                (
                    svma,
                    Slice {
                        data: data.clone(),
                        range: bytes,
                    },
                ),
            );
        }
    }
    Some(FileInfo { segments, sections })
}

/// Unwinders per process, rebuilt when the process's mappings change.
#[derive(Default)]
pub struct Unwinders {
    files: HashMap<(String, super::identity::FileId), Option<Arc<FileInfo>>>,
    per_pid: HashMap<u32, UnwinderX86_64<Slice>>,
    /// Per process, the jitdump its unwinder was built with and that
    /// file's size then: the runtime appends while it runs.
    jitdumps: HashMap<u32, (String, u64)>,
    cache: Option<CacheX86_64>,
}

impl Unwinders {
    /// Forgets a process's unwinder (its mappings changed).
    pub fn invalidate(&mut self, pid: u32) {
        self.per_pid.remove(&pid);
    }

    fn file(&mut self, path: &str, id: super::identity::FileId) -> Option<Arc<FileInfo>> {
        self.files
            .entry((path.to_string(), id))
            .or_insert_with(|| read_file_info(path, id).map(Arc::new))
            .clone()
    }

    /// Modules for the JIT code of a jitdump that has unwind tables.
    fn add_jit_modules(u: &mut UnwinderX86_64<Slice>, path: &str) {
        let Ok(bytes) = std::fs::read(path) else {
            return;
        };
        let data = Arc::new(bytes);
        for j in super::jit::parse(&data).unwind {
            let eh_frame = Slice {
                data: data.clone(),
                range: j.eh_frame.clone(),
            };
            let len = j.eh_frame.len() as u64;
            // framehop works on 32-bit offsets from a module's base: the
            // code's own start, where it lies in the process (svma = avma).
            u.add_module(Module::new(
                path.to_string(),
                j.code.clone(),
                j.code.start,
                ExplicitModuleSectionInfo {
                    base_svma: j.code.start,
                    text_svma: Some(j.code.clone()),
                    eh_frame_svma: Some(j.eh_frame_address..j.eh_frame_address + len),
                    eh_frame: Some(eh_frame),
                    ..Default::default()
                },
            ));
        }
    }

    fn build(&mut self, maps: &[Mapping]) -> UnwinderX86_64<Slice> {
        let mut u = UnwinderX86_64::new();
        for m in maps {
            if super::jit::jitdump_pid(&m.path).is_some() {
                Self::add_jit_modules(&mut u, &m.path);
            }
        }
        for m in maps.iter().filter(|m| m.path.starts_with('/')) {
            let Some(info) = self.file(&m.path, m.file) else {
                continue;
            };
            // The segment holding the mapped file offset gives the address
            // where the file's virtual address 0 lies in this process.
            let Some(&(off, _, va)) = info
                .segments
                .iter()
                .find(|&&(off, size, _)| off <= m.pgoff && m.pgoff < off + size.max(1))
            else {
                continue;
            };
            let seg_va = m.pgoff - off + va;
            let base_avma = m.start.wrapping_sub(seg_va);
            let section = |n: &str| info.sections.get(n).cloned();
            let (text_svma, text) =
                section(".text").map_or((None, None), |(r, d)| (Some(r), Some(d)));
            let (eh_svma, eh) =
                section(".eh_frame").map_or((None, None), |(r, d)| (Some(r), Some(d)));
            let (hdr_svma, hdr) =
                section(".eh_frame_hdr").map_or((None, None), |(r, d)| (Some(r), Some(d)));
            let got_svma = section(".got").map(|(r, _)| r);
            let debug_frame = section(".debug_frame").map(|(_, d)| d);
            let module = Module::new(
                m.path.clone(),
                m.start..m.end,
                base_avma,
                ExplicitModuleSectionInfo {
                    base_svma: 0,
                    text_svma,
                    text,
                    got_svma,
                    eh_frame_svma: eh_svma,
                    eh_frame: eh,
                    eh_frame_hdr_svma: hdr_svma,
                    eh_frame_hdr: hdr,
                    debug_frame,
                    ..Default::default()
                },
            );
            u.add_module(module);
        }
        u
    }

    /// The user frames of one sample, leaf first, as addresses to look up
    /// (return addresses already moved back into their call).
    pub fn unwind(&mut self, pid: u32, maps: &[Mapping], regs: [u64; 3], stack: &[u8]) -> Vec<u64> {
        let [bp, sp, ip] = regs;
        // A jitdump that grew since the unwinder was built describes new
        // code: build it again.
        if let Some(path) = maps
            .iter()
            .find(|m| super::jit::jitdump_pid(&m.path).is_some())
            .map(|m| m.path.clone())
        {
            let size = std::fs::metadata(&path).map_or(0, |m| m.len());
            if self.jitdumps.get(&pid) != Some(&(path.clone(), size)) {
                self.per_pid.remove(&pid);
                self.jitdumps.insert(pid, (path, size));
            }
        }
        if !self.per_pid.contains_key(&pid) {
            let u = self.build(maps);
            self.per_pid.insert(pid, u);
        }
        let cache = self.cache.get_or_insert_with(CacheX86_64::new);
        let unwinder = &self.per_pid[&pid];
        let mut read_stack = |addr: u64| -> Result<u64, ()> {
            let off = addr.checked_sub(sp).ok_or(())? as usize;
            let b = stack.get(off..off + 8).ok_or(())?;
            Ok(u64::from_ne_bytes(b.try_into().map_err(|_| ())?))
        };
        let mut out = Vec::new();
        let mut it = unwinder.iter_frames(
            ip,
            UnwindRegsX86_64::new(ip, sp, bp),
            cache,
            &mut read_stack,
        );
        while let Ok(Some(f)) = it.next() {
            out.push(f.address_for_lookup());
            if out.len() >= 256 {
                break;
            }
        }
        out
    }
}
