//! The spawner's program as the file a session execs: the user's cached
//! copy, written once per build of the program, or else a memory file
//! written at the process's start (writing the 0.7 MB there cost 0.5 to
//! 0.9 ms of every session's CPU before its first run).
//!
//! The copy is only executed when nobody but us could have put it there:
//! it is opened without following a link, in a directory owned by us and
//! writable only by us, and must be a regular file of ours, writable only
//! by us, executable by us, of the program's size; it is executed through
//! the descriptor so checked. It is written beside its name and renamed
//! into place without replacing anything, so no session ever executes a
//! half-written copy and nothing found there is overwritten. Anything else
//! (no cache directory, a read-only or full filesystem, a refused exec)
//! falls back silently to the memory file. Writing a copy also removes
//! what other builds and interrupted writers left there long ago
//! ([`prune`]), so the directory does not grow with every upgrade.

use super::Fd;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// The spawner helper built from spawner.c by build.rs.
static SPAWNER_ELF: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cmdscope-spawner"));

/// The cached copy's file name, `spawner-<hash>-<size>`: build.rs hashes
/// the program's bytes, so a build whose spawner differs never executes
/// another build's copy.
const CACHED_NAME: &str = env!("CMDSCOPE_SPAWNER_NAME");

/// Where a spawner's program came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Source {
    Cache,
    Memory,
}

/// The spawner's program: a descriptor, close-on-exec, at 10 or above
/// (above 3, where the spawner's socket goes), executed as
/// `/proc/self/fd/<n>` (so what was checked is what runs).
#[derive(Clone, Copy, Debug)]
pub(super) struct Program {
    pub fd: i32,
    pub source: Source,
}

/// Set when the cached copy could not be executed (a `noexec` mount, say):
/// the process's later spawners use the memory file.
static CACHE_REFUSED: AtomicBool = AtomicBool::new(false);

/// The program for the next spawner: the cached copy (found or written
/// once per process), else the memory file (written once per process).
/// A spawner is started per session, and one more in concurrency mode, of
/// which the slots' spawners are copies.
pub(super) fn spawner_program() -> std::io::Result<Program> {
    static CACHED: OnceLock<Option<i32>> = OnceLock::new();
    if !CACHE_REFUSED.load(Ordering::Relaxed) {
        let cached = CACHED.get_or_init(|| cache_base().and_then(|base| cached_program(&base)));
        if let Some(fd) = *cached {
            return Ok(Program {
                fd,
                source: Source::Cache,
            });
        }
    }
    memory_program()
}

/// After the cached copy's exec failed: the memory file, from now on.
pub(super) fn refuse_cache() -> std::io::Result<Program> {
    CACHE_REFUSED.store(true, Ordering::Relaxed);
    memory_program()
}

/// `$XDG_CACHE_HOME`, else `~/.cache`: absolute only (the rules say to
/// ignore a relative one; it would put the copy under the working
/// directory).
fn cache_base() -> Option<PathBuf> {
    crate::dirs::user_dir("XDG_CACHE_HOME", ".cache").filter(|p| p.is_absolute())
}

/// The memory file, written once per process.
fn memory_program() -> std::io::Result<Program> {
    static MEMORY: OnceLock<i32> = OnceLock::new();
    static WRITING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let memory = |fd| Program {
        fd,
        source: Source::Memory,
    };
    if let Some(&fd) = MEMORY.get() {
        return Ok(memory(fd));
    }
    let _one = WRITING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&fd) = MEMORY.get() {
        return Ok(memory(fd));
    }
    // SAFETY: memfd_create with a NUL-terminated name.
    let memfd = Fd(unsafe { libc::memfd_create(c"cmdscope-spawner".as_ptr(), libc::MFD_CLOEXEC) });
    if memfd.0 < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let fd = above_socket(memfd)?;
    write_all(&fd)?;
    Ok(memory(*MEMORY.get_or_init(|| keep(fd))))
}

/// `fd` moved to 10 or above, close-on-exec.
fn above_socket(fd: Fd) -> std::io::Result<Fd> {
    // SAFETY: fd is open; the original is closed as it drops.
    let high = Fd(unsafe { libc::fcntl(fd.0, libc::F_DUPFD_CLOEXEC, 10) });
    if high.0 < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(high)
}

/// Kept open for the process's life.
fn keep(fd: Fd) -> i32 {
    let raw = fd.0;
    std::mem::forget(fd);
    raw
}

fn write_all(fd: &Fd) -> std::io::Result<()> {
    let mut written = 0;
    while written < SPAWNER_ELF.len() {
        let rest = &SPAWNER_ELF[written..];
        // SAFETY: rest is a valid buffer.
        let n = unsafe { libc::write(fd.0, rest.as_ptr().cast(), rest.len()) };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if n == 0 {
            return Err(std::io::Error::from_raw_os_error(libc::ENOSPC));
        }
        written += n as usize;
    }
    Ok(())
}

/// The cached copy under `base/cmdscope`, written there first when missing;
/// `None` when there is none we may execute.
fn cached_program(base: &Path) -> Option<i32> {
    let dir = cache_dir(base)?;
    let file = match open_copy(&dir) {
        Found::Usable(file) => file,
        Found::Missing => {
            write_copy(&dir);
            prune(&dir, std::time::SystemTime::now());
            // Ours, or a copy another session renamed into place first.
            match open_copy(&dir) {
                Found::Usable(file) => file,
                _ => return None,
            }
        }
        Found::Refused => return None,
    };
    above_socket(file).ok().map(keep)
}

/// `base/cmdscope`, opened without following a link there, owned by us and
/// writable by nobody else; created (mode 0700) in a `base` of ours.
fn cache_dir(base: &Path) -> Option<Fd> {
    let path = base.join("cmdscope");
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    let dir = match open_at(libc::AT_FDCWD, &path, flags, 0) {
        Ok(dir) => dir,
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
            // ~/.cache itself may not exist yet; nothing deeper is made.
            let base_c = c_path(base)?;
            // SAFETY: a NUL-terminated path.
            unsafe { libc::mkdir(base_c.as_ptr(), 0o700) };
            let base_fd = open_at(
                libc::AT_FDCWD,
                base,
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
                0,
            )
            .ok()?;
            // Not in someone else's directory (root with a user's HOME).
            if stat(&base_fd)?.st_uid != euid() {
                return None;
            }
            // SAFETY: base_fd is open; a constant name.
            unsafe { libc::mkdirat(base_fd.0, c"cmdscope".as_ptr(), 0o700) };
            open_at(base_fd.0, Path::new("cmdscope"), flags, 0).ok()?
        }
        Err(_) => return None,
    };
    let st = stat(&dir)?;
    (st.st_uid == euid() && st.st_mode & 0o022 == 0).then_some(dir)
}

enum Found {
    Usable(Fd),
    Missing,
    /// Something else has the name (a link, a file not ours or open to
    /// others' writes, a truncated copy): left alone, and not executed.
    Refused,
}

/// The copy in `dir`, checked.
fn open_copy(dir: &Fd) -> Found {
    // Non-blocking: a FIFO of that name must not hang the session.
    let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
    let file = match open_at(dir.0, Path::new(CACHED_NAME), flags, 0) {
        Ok(file) => file,
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Found::Missing,
        Err(_) => return Found::Refused,
    };
    match stat(&file) {
        Some(st)
            if st.st_mode & libc::S_IFMT == libc::S_IFREG
                && st.st_uid == euid()
                && st.st_mode & 0o022 == 0
                && st.st_mode & 0o100 != 0
                && st.st_size as u64 == SPAWNER_ELF.len() as u64 =>
        {
            Found::Usable(file)
        }
        _ => Found::Refused,
    }
}

/// Writes the copy beside its name (mode 0700, synced: a crash must not
/// leave a name that holds less than the program) and renames it into
/// place unless something has the name by then. Failures leave no file.
fn write_copy(dir: &Fd) {
    // Unique to this process and call: the name is created exclusively.
    static CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let temporary = format!(".{CACHED_NAME}.{}.{call}", std::process::id());
    let Some(temporary_c) = c_path(Path::new(&temporary)) else {
        return;
    };
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    let Ok(file) = open_at(dir.0, Path::new(&temporary), flags, 0o700) else {
        return;
    };
    // SAFETY: file is open; the umask may have taken bits of 0700.
    let written = write_all(&file).is_ok()
        && unsafe { libc::fchmod(file.0, 0o700) } == 0
        && unsafe { libc::fsync(file.0) } == 0;
    // Closed before the rename: a file open for writing cannot be executed.
    drop(file);
    let name = c_path(Path::new(CACHED_NAME));
    let renamed = written
        && name.is_some_and(|name| {
            // SAFETY: both names NUL-terminated, relative to dir.
            unsafe {
                libc::syscall(
                    libc::SYS_renameat2,
                    dir.0,
                    temporary_c.as_ptr(),
                    dir.0,
                    name.as_ptr(),
                    libc::RENAME_NOREPLACE,
                ) == 0
            }
        });
    if !renamed {
        // SAFETY: a NUL-terminated name relative to dir.
        unsafe { libc::unlinkat(dir.0, temporary_c.as_ptr(), 0) };
    }
}

/// A copy another build wrote is removed once it has not been written
/// for this long: a build still in use writes its copy again (one write,
/// at most once per period), one no longer installed stops taking room.
const OLD_COPY: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);

/// A temporary copy is written in milliseconds: one this old was left by
/// a writer that was killed or crashed.
const STALE_TEMPORARY: std::time::Duration = std::time::Duration::from_secs(3600);

/// Removes from `dir`, as of `now`, the copies other builds wrote there
/// that are older than [`OLD_COPY`] and the temporary copies older than
/// [`STALE_TEMPORARY`]: only regular files of ours whose names are the
/// ones this module gives (`spawner-<16 hex digits>-<size>`, and
/// `.<that>.<pid>.<call>`); links, other files and other users' files are
/// left as they are. Called only after a copy was written, so a session
/// that finds its copy pays nothing for it.
fn prune(dir: &Fd, now: std::time::SystemTime) {
    for name in entries(dir) {
        let Some(text) = name.to_str().filter(|&t| t != CACHED_NAME) else {
            continue;
        };
        let age = if is_copy_name(text) {
            OLD_COPY
        } else if text
            .strip_prefix('.')
            .and_then(|rest| rest.split_once('.'))
            .is_some_and(|(copy, suffix)| is_copy_name(copy) && is_pid_call(suffix))
        {
            STALE_TEMPORARY
        } else {
            continue;
        };
        let Ok(c) = CString::new(text) else { continue };
        // SAFETY: stat is plain data; c is NUL-terminated, relative to dir.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstatat(dir.0, c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
            continue;
        }
        let written =
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(st.st_mtime.max(0) as u64);
        let old = now.duration_since(written).is_ok_and(|d| d > age);
        if st.st_mode & libc::S_IFMT == libc::S_IFREG && st.st_uid == euid() && old {
            // SAFETY: a NUL-terminated name relative to dir.
            unsafe { libc::unlinkat(dir.0, c.as_ptr(), 0) };
        }
    }
}

/// `spawner-<16 hex digits>-<decimal size>`, the names build.rs gives.
fn is_copy_name(name: &str) -> bool {
    let Some((hash, size)) = name
        .strip_prefix("spawner-")
        .and_then(|rest| rest.split_once('-'))
    else {
        return false;
    };
    hash.len() == 16
        && hash.bytes().all(|b| b.is_ascii_hexdigit())
        && !size.is_empty()
        && size.bytes().all(|b| b.is_ascii_digit())
}

/// `<pid>.<call>`, the tail `write_copy` gives its temporary file.
fn is_pid_call(suffix: &str) -> bool {
    suffix.split_once('.').is_some_and(|(pid, call)| {
        [pid, call]
            .iter()
            .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// The names in `dir` (read through a duplicate of its descriptor, which
/// `closedir` closes); none when it cannot be listed.
fn entries(dir: &Fd) -> Vec<std::ffi::OsString> {
    use std::os::unix::ffi::OsStringExt;
    // SAFETY: dir is open; the duplicate is owned by the stream below.
    let dup = unsafe { libc::fcntl(dir.0, libc::F_DUPFD_CLOEXEC, 0) };
    if dup < 0 {
        return Vec::new();
    }
    // SAFETY: dup is an open directory descriptor.
    let stream = unsafe { libc::fdopendir(dup) };
    if stream.is_null() {
        // SAFETY: fdopendir failed, so dup is still ours to close.
        unsafe { libc::close(dup) };
        return Vec::new();
    }
    // The listing starts from the beginning whatever was read before.
    // SAFETY: stream is a valid directory stream.
    unsafe { libc::rewinddir(stream) };
    let mut names = Vec::new();
    loop {
        // SAFETY: stream is valid; the entry is read before the next call.
        let entry = unsafe { libc::readdir(stream) };
        if entry.is_null() {
            break;
        }
        // SAFETY: d_name is NUL-terminated within the entry.
        let name = unsafe { std::ffi::CStr::from_ptr((*entry).d_name.as_ptr()) };
        names.push(std::ffi::OsString::from_vec(name.to_bytes().to_vec()));
    }
    // SAFETY: stream is valid and closed once (closing dup with it).
    unsafe { libc::closedir(stream) };
    names
}

fn open_at(dir: i32, path: &Path, flags: i32, mode: libc::mode_t) -> std::io::Result<Fd> {
    let c = c_path(path).ok_or_else(|| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: c is NUL-terminated; mode is used only with O_CREAT.
    let fd = unsafe { libc::openat(dir, c.as_ptr(), flags, mode as libc::c_uint) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(Fd(fd))
}

fn c_path(path: &Path) -> Option<CString> {
    CString::new(path.as_os_str().as_bytes()).ok()
}

fn stat(fd: &Fd) -> Option<libc::stat> {
    // SAFETY: fd is open; stat is plain data.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    (unsafe { libc::fstat(fd.0, &mut st) } == 0).then_some(st)
}

fn euid() -> libc::uid_t {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::time::Duration;

    fn fresh() -> tempfile::TempDir {
        tempfile::tempdir().expect("tempdir")
    }

    fn close(fd: i32) {
        // SAFETY: a descriptor the test was handed and owns.
        unsafe { libc::close(fd) };
    }

    /// The file a descriptor is open on.
    fn target(fd: i32) -> PathBuf {
        std::fs::read_link(format!("/proc/self/fd/{fd}")).expect("readlink")
    }

    #[test]
    fn the_copy_is_written_once_with_the_program_and_mode_0700() {
        let base = fresh();
        let fd = cached_program(base.path()).expect("a cached copy");
        assert!(fd >= 10);
        let copy = base.path().join("cmdscope").join(CACHED_NAME);
        assert_eq!(target(fd), copy);
        close(fd);
        let meta = std::fs::symlink_metadata(&copy).expect("the copy");
        assert_eq!(meta.permissions().mode() & 0o7777, 0o700);
        assert_eq!(std::fs::read(&copy).expect("read"), SPAWNER_ELF);
        let dir = std::fs::metadata(base.path().join("cmdscope")).expect("dir");
        assert_eq!(dir.permissions().mode() & 0o777, 0o700);
        // Found again, not rewritten; no temporary file left beside it.
        let inode = meta.ino();
        let again = cached_program(base.path()).expect("found again");
        close(again);
        assert_eq!(std::fs::metadata(&copy).expect("copy").ino(), inode);
        let names: Vec<_> = std::fs::read_dir(base.path().join("cmdscope"))
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, [CACHED_NAME]);
    }

    /// A copy at the name, altered by `alter`, is refused and left as it is.
    fn refused_and_kept(alter: impl FnOnce(&Path)) {
        let base = fresh();
        close(cached_program(base.path()).expect("a cached copy"));
        let copy = base.path().join("cmdscope").join(CACHED_NAME);
        alter(&copy);
        let before = std::fs::symlink_metadata(&copy).expect("still there");
        assert_eq!(cached_program(base.path()), None);
        let after = std::fs::symlink_metadata(&copy).expect("still there");
        assert_eq!(
            (before.ino(), before.mode(), before.size()),
            (after.ino(), after.mode(), after.size())
        );
    }

    #[test]
    fn a_copy_open_to_others_writes_is_refused() {
        for mode in [0o720, 0o702, 0o777] {
            refused_and_kept(|copy| {
                std::fs::set_permissions(copy, std::fs::Permissions::from_mode(mode)).unwrap()
            });
        }
    }

    #[test]
    fn a_copy_we_cannot_execute_is_refused() {
        refused_and_kept(|copy| {
            std::fs::set_permissions(copy, std::fs::Permissions::from_mode(0o600)).unwrap()
        });
    }

    #[test]
    fn a_truncated_copy_is_refused() {
        refused_and_kept(|copy| {
            let f = std::fs::OpenOptions::new().write(true).open(copy).unwrap();
            f.set_len(SPAWNER_ELF.len() as u64 / 2).unwrap();
        });
    }

    #[test]
    fn a_link_at_the_name_is_not_followed() {
        let elsewhere = fresh();
        let real = elsewhere.path().join("program");
        std::fs::write(&real, SPAWNER_ELF).unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).unwrap();
        refused_and_kept(|copy| {
            std::fs::remove_file(copy).unwrap();
            std::os::unix::fs::symlink(&real, copy).unwrap();
        });
    }

    #[test]
    fn a_copy_owned_by_another_user_is_refused() {
        if euid() != 0 {
            eprintln!("SKIPPED: only root can give the copy to another user");
            return;
        }
        refused_and_kept(|copy| std::os::unix::fs::chown(copy, Some(65534), None).unwrap());
    }

    #[test]
    fn a_directory_open_to_others_or_a_link_is_not_used() {
        let base = fresh();
        let dir = base.path().join("cmdscope");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert_eq!(cached_program(base.path()), None);
        assert!(!dir.join(CACHED_NAME).exists(), "nothing written there");
        // A link to a directory of ours: not followed either.
        let other = fresh();
        std::fs::remove_dir(&dir).unwrap();
        std::os::unix::fs::symlink(other.path(), &dir).unwrap();
        assert_eq!(cached_program(base.path()), None);
        assert!(!other.path().join(CACHED_NAME).exists());
        if euid() == 0 {
            std::fs::remove_file(&dir).unwrap();
            std::fs::create_dir(&dir).unwrap();
            std::os::unix::fs::chown(&dir, Some(65534), None).unwrap();
            assert_eq!(cached_program(base.path()), None);
            assert!(!dir.join(CACHED_NAME).exists());
        }
    }

    /// The names left in `dir`, sorted.
    fn listing(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("list")
            .map(|e| e.expect("entry").file_name().into_string().expect("utf-8"))
            .collect();
        names.sort();
        names
    }

    #[test]
    fn writing_the_copy_removes_other_builds_old_copies_and_nothing_else() {
        let base = fresh();
        let dir = base.path().join("cmdscope");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let long_ago = std::time::SystemTime::now() - OLD_COPY - Duration::from_secs(3600);
        let old = |name: &str| {
            let path = dir.join(name);
            let file = std::fs::File::create(&path).unwrap();
            file.set_modified(long_ago).unwrap();
        };
        old("spawner-00000000deadbeef-1234");
        old(".spawner-00000000deadbeef-1234.4242.0");
        // Not names this module gives: kept, however old.
        old("spawner-deadbeef-1234");
        old("notes.txt");
        old("spawner-00000000deadbeef-1234.bak");
        // A recent copy of another build is kept.
        std::fs::write(dir.join("spawner-1111111111111111-99"), b"x").unwrap();
        close(cached_program(base.path()).expect("a cached copy"));
        let mut expected = vec![
            CACHED_NAME.to_string(),
            "notes.txt".into(),
            "spawner-00000000deadbeef-1234.bak".into(),
            "spawner-1111111111111111-99".into(),
            "spawner-deadbeef-1234".into(),
        ];
        expected.sort();
        assert_eq!(listing(&dir), expected);
        // Found again, nothing is pruned: only a write prunes.
        old("spawner-2222222222222222-99");
        close(cached_program(base.path()).expect("found"));
        assert!(dir.join("spawner-2222222222222222-99").exists());
    }

    #[test]
    fn pruning_goes_by_age_and_leaves_links_and_others_files() {
        let base = fresh();
        close(cached_program(base.path()).expect("a cached copy"));
        let dir = base.path().join("cmdscope");
        let elsewhere = fresh();
        let target = elsewhere.path().join("kept");
        std::fs::write(&target, b"x").unwrap();
        std::fs::write(dir.join("spawner-00000000deadbeef-1"), b"x").unwrap();
        std::fs::write(dir.join(".spawner-00000000deadbeef-1.7.3"), b"x").unwrap();
        std::os::unix::fs::symlink(&target, dir.join("spawner-00000000deadbee0-1")).unwrap();
        if euid() == 0 {
            let theirs = dir.join("spawner-00000000deadbee1-1");
            std::fs::write(&theirs, b"x").unwrap();
            std::os::unix::fs::chown(&theirs, Some(65534), None).unwrap();
        }
        let open_dir = open_at(
            libc::AT_FDCWD,
            &dir,
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            0,
        )
        .expect("dir");
        let now = std::time::SystemTime::now();
        // Two hours on: the temporary is stale, the copies are not old.
        prune(&open_dir, now + Duration::from_secs(2 * 3600));
        assert!(!dir.join(".spawner-00000000deadbeef-1.7.3").exists());
        assert!(dir.join("spawner-00000000deadbeef-1").exists());
        // Past the copies' age: the other build's copy goes, ours stays
        // (it is this build's name), the link and its target stay, and so
        // does another user's file.
        prune(&open_dir, now + OLD_COPY + Duration::from_secs(3600));
        assert!(!dir.join("spawner-00000000deadbeef-1").exists());
        assert!(dir.join(CACHED_NAME).exists());
        let link = dir.join("spawner-00000000deadbee0-1");
        assert!(std::fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink()));
        assert!(target.exists());
        if euid() == 0 {
            assert!(dir.join("spawner-00000000deadbee1-1").exists());
        }
    }

    #[test]
    fn the_names_pruned_are_exactly_the_ones_given() {
        assert!(is_copy_name(CACHED_NAME));
        assert!(is_copy_name("spawner-0123456789abcdef-695016"));
        for other in [
            "spawner-0123456789abcde-695016",
            "spawner-0123456789abcdeg-695016",
            "spawner-0123456789abcdef-",
            "spawner-0123456789abcdef-69x",
            "spawner-0123456789abcdef",
            "Spawner-0123456789abcdef-1",
        ] {
            assert!(!is_copy_name(other), "{other}");
        }
        assert!(is_pid_call("4242.0"));
        for other in ["4242", "4242.", ".0", "42a.0", "4242.0.1"] {
            assert!(!is_pid_call(other), "{other}");
        }
    }

    #[test]
    fn sessions_writing_at_once_all_get_the_whole_copy() {
        let base = fresh();
        let path = base.path().to_path_buf();
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || cached_program(&path))
            })
            .collect();
        for t in threads {
            let fd = t.join().unwrap().expect("a usable copy");
            assert_eq!(std::fs::read(target(fd)).unwrap(), SPAWNER_ELF);
            close(fd);
        }
        let names = std::fs::read_dir(path.join("cmdscope")).unwrap().count();
        assert_eq!(names, 1, "one copy, no temporary file left");
    }
}
