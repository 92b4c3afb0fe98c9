//! Which file a mapping was, told at the time it was mapped: its GNU build
//! id where the kernel reads it for us (`perf_event_attr.build_id`, MMAP2
//! records since Linux 5.12), else its device, inode and modification
//! time. A binary replaced while it is profiled is then symbolised from
//! what ran, never from the new file at the same path.

use std::os::unix::fs::MetadataExt;

/// The longest build id the kernel reports (SHA-1).
pub const BUILD_ID_MAX: usize = 20;

/// What identifies a mapped file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FileId {
    /// Nothing known: an MMAP record, or a file gone before it was seen.
    #[default]
    Unknown,
    /// The GNU build id (`len` bytes of `bytes`).
    BuildId { len: u8, bytes: [u8; BUILD_ID_MAX] },
    /// Device, inode, and the modification time in nanoseconds read when
    /// the mapping was recorded (0 when the file at the path was already
    /// another one).
    Inode { dev: u64, ino: u64, mtime: i64 },
}

impl FileId {
    pub fn build_id(id: &[u8]) -> FileId {
        let len = id.len().min(BUILD_ID_MAX);
        let mut bytes = [0u8; BUILD_ID_MAX];
        bytes[..len].copy_from_slice(&id[..len]);
        FileId::BuildId {
            len: len as u8,
            bytes,
        }
    }

    /// The build id's bytes, if that is what identifies the file.
    pub fn build_id_bytes(&self) -> Option<&[u8]> {
        match self {
            FileId::BuildId { len, bytes } => Some(&bytes[..*len as usize]),
            _ => None,
        }
    }

    /// From an MMAP2 record's device and inode: the file at `path` is
    /// asked for its modification time now, while the mapping is fresh,
    /// and only if it is still the same inode.
    pub fn inode(path: &str, major: u32, minor: u32, ino: u64) -> FileId {
        let dev = libc::makedev(major, minor);
        let mtime = std::fs::metadata(path)
            .ok()
            .filter(|m| m.dev() == dev && m.ino() == ino)
            .map_or(0, |m| m.mtime() * 1_000_000_000 + m.mtime_nsec());
        FileId::Inode { dev, ino, mtime }
    }

    /// Whether the file now at `path` (with its build id, when known) is
    /// the one that was mapped. `Unknown` matches anything: there is
    /// nothing to tell them apart.
    pub fn matches(&self, meta: Option<&std::fs::Metadata>, build_id: Option<&[u8]>) -> bool {
        match self {
            FileId::Unknown => true,
            FileId::BuildId { .. } => build_id == self.build_id_bytes(),
            FileId::Inode { dev, ino, mtime } => meta.is_some_and(|m| {
                m.dev() == *dev
                    && m.ino() == *ino
                    && *mtime != 0
                    && m.mtime() * 1_000_000_000 + m.mtime_nsec() == *mtime
            }),
        }
    }
}

/// Lower-case hex, as build ids are written in paths and URLs.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The GNU build id note of an ELF file.
pub fn elf_build_id(file: &object::File) -> Option<Vec<u8>> {
    use object::Object;
    file.build_id()
        .ok()
        .flatten()
        .filter(|b| !b.is_empty())
        .map(<[u8]>::to_vec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_ids_compare_by_their_bytes() {
        let a = FileId::build_id(&[1, 2, 3]);
        assert_eq!(a.build_id_bytes(), Some(&[1u8, 2, 3][..]));
        assert!(a.matches(None, Some(&[1, 2, 3])));
        assert!(!a.matches(None, Some(&[1, 2, 4])));
        assert!(!a.matches(None, None));
        assert!(FileId::Unknown.matches(None, None));
        assert_eq!(hex(&[0x0a, 0xff]), "0aff");
    }

    #[test]
    fn an_inode_matches_only_the_same_unchanged_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "one").unwrap();
        let m = std::fs::metadata(&path).unwrap();
        let p = path.to_str().unwrap();
        let id = FileId::inode(p, libc::major(m.dev()), libc::minor(m.dev()), m.ino());
        assert!(id.matches(Some(&m), None));
        // Replaced by rename: another inode.
        let new = dir.path().join("g");
        std::fs::write(&new, "two").unwrap();
        std::fs::rename(&new, &path).unwrap();
        let m2 = std::fs::metadata(&path).unwrap();
        assert!(!id.matches(Some(&m2), None));
        // Mapped after it was already replaced: no time to compare.
        let stale = FileId::inode(p, libc::major(m.dev()), libc::minor(m.dev()), m.ino());
        assert!(!stale.matches(Some(&m2), None));
    }
}
