//! Everything cmdscope writes: standard output and files the user names.
//!
//! Standard output: [`print`] is the one writer. A reader that went away
//! (`| head -1`, `| true`) ends printing quietly instead of panicking, as
//! ripgrep does; everything that must not be lost (exports, the store) is
//! written before the terminal report.
//!
//! Files: [`write_file`] is the one function behind every export, `report
//! --html`, `--plot` and `explain --json`. The rules (docs/RELIABILITY.md):
//! - `-`, `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` are the open
//!   descriptors themselves, written to without reopening;
//! - a symbolic link is written through, to its target; the link stays;
//! - anything that is not a regular file (a device, a FIFO) is written in
//!   place, never replaced;
//! - a regular file with more than one hard link is written in place, so
//!   that every link keeps seeing the same file;
//! - any other regular file is replaced atomically (temporary file in the
//!   same directory, then rename), keeping its mode (and owner, if allowed);
//! - a new file gets mode 0666 minus the umask, as `>` in a shell would;
//! - errors name the user's path, never the temporary file.
//!
//! Files of a directory cmdscope generates (`report --site DIR`):
//! [`replace_in_dir`] always writes a temporary file in the directory and
//! renames it over the name, so whatever was planted there (a link, a
//! FIFO) is replaced, never written through: whoever can write into a
//! shared `public/` cannot make the next build overwrite a file elsewhere.
//! A regular file replaced keeps its mode (and owner, if allowed).

use std::fs::{File, OpenOptions, Permissions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Error, OutputError, Result};

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes `text` to standard output. Once the reader has gone away
/// (EPIPE), this and every later call print nothing and report nothing.
pub fn print(text: &str) {
    print_bytes(text.as_bytes());
}

/// [`print`] for bytes.
pub fn print_bytes(bytes: &[u8]) {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    // EPIPE is the normal end of `| head`; any other failure of the
    // terminal or pipe is not worth more than stopping, either.
    if out.write_all(bytes).and_then(|_| out.flush()).is_err() {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
    }
}

/// Writes one line to standard error; a closed stderr (`2>&1 | head -1`)
/// is ignored, as for [`print`], instead of panicking like `eprintln!`.
pub fn print_err(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}").and_then(|_| err.flush());
}

/// Writes `text` to standard error as it is, lines and all: [`print`]'s
/// twin for text rendered whole for standard error.
pub fn print_err_text(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|_| err.flush());
}

/// `eprintln!` that never panics: see [`print_err`].
#[macro_export]
macro_rules! eprint_line {
    ($($arg:tt)*) => {
        $crate::output::print_err(&format!($($arg)*))
    };
}

/// `println!` through [`print`]: ends quietly on a closed standard output.
#[macro_export]
macro_rules! print_line {
    ($($arg:tt)*) => {
        $crate::output::print(&format!("{}\n", format_args!($($arg)*)))
    };
}

/// `text` with every character that could drive a terminal made visible:
/// control characters other than newline and tab (ESC, BEL, CR, DEL, the
/// C1 range) and the bidirectional controls that reorder what is shown
/// (U+202A..U+202E, U+2066..U+2069, U+200E, U+200F) become `\u{..}`.
/// For everything printed that came from a file, a store or a command.
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    let hostile = |c: char| (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c);
    if !text.chars().any(hostile) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hostile(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// [`escape_controls`] for text that must stay on one line (error
/// messages, which may quote what the user typed or a file held).
pub fn escape_line(text: &str) -> String {
    escape_controls(text).replace('\n', "\\n")
}

/// The Unicode controls that change the display order of text around them
/// ("Trojan Source"): embeddings, overrides, isolates and marks.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// An I/O error without the path a library may have added to its message
/// (tempfile names its temporary file), so messages show only the user's.
fn bare(e: std::io::Error) -> std::io::Error {
    match e.raw_os_error() {
        Some(code) => std::io::Error::from_raw_os_error(code),
        None => std::io::Error::from(e.kind()),
    }
}

fn write_error(path: &Path, e: std::io::Error) -> Error {
    Error::Write {
        path: path.into(),
        source: bare(e),
    }
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// The file a path names once symbolic links are followed (the path itself
/// when it is not a link, or its target does not exist yet).
fn resolve_links(path: &Path) -> PathBuf {
    let mut current = path.to_path_buf();
    // Bounded: a loop of links ends in the kernel's ELOOP when written.
    for _ in 0..40 {
        match std::fs::read_link(&current) {
            Ok(target) => current = parent_dir(&current).join(target),
            Err(_) => break,
        }
    }
    current
}

fn access_ok(path: &Path, mode: libc::c_int) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated string for the duration of the call.
    unsafe { libc::access(c.as_ptr(), mode) == 0 }
}

/// Checks up front that `path` can be written, so that a long benchmark does
/// not end in "cannot write". Creates nothing and changes nothing.
pub fn check_writable(path: &Path) -> Result<()> {
    if is_stdout(path) {
        return Ok(());
    }
    let fail = |msg: &str| Error::Write {
        path: path.into(),
        source: std::io::Error::other(msg.to_string()),
    };
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(fail("is a directory")),
        Ok(_) if access_ok(path, libc::W_OK) => Ok(()),
        Ok(_) => Err(write_error(
            path,
            std::io::Error::from(ErrorKind::PermissionDenied),
        )),
        Err(e) if e.kind() == ErrorKind::NotFound => {
            let dir = parent_dir(&resolve_links(path)).to_path_buf();
            match std::fs::metadata(&dir) {
                Ok(m) if !m.is_dir() => Err(write_error(
                    path,
                    std::io::Error::from_raw_os_error(libc::ENOTDIR),
                )),
                Ok(_) if access_ok(&dir, libc::W_OK | libc::X_OK) => Ok(()),
                Ok(_) => Err(write_error(
                    path,
                    std::io::Error::from(ErrorKind::PermissionDenied),
                )),
                Err(e) => Err(write_error(path, e)),
            }
        }
        Err(e) => Err(write_error(path, e)),
    }
}

/// Checks up front that `dir` can be used as a generated directory
/// (`replace_in_dir`'s): an existing directory we may create files in, or a
/// path `create_dir_all` can make because its nearest existing ancestor is
/// such a directory. Creates nothing and changes nothing.
pub fn check_writable_dir(dir: &Path) -> Result<()> {
    let fail = |e: std::io::Error| write_error(dir, e);
    let mut at = resolve_links(dir);
    // Bounded by the path's depth.
    loop {
        match std::fs::metadata(&at) {
            Ok(m) if !m.is_dir() => {
                return Err(fail(std::io::Error::from_raw_os_error(libc::ENOTDIR)))
            }
            Ok(_) if access_ok(&at, libc::W_OK | libc::X_OK) => return Ok(()),
            Ok(_) => return Err(fail(std::io::Error::from(ErrorKind::PermissionDenied))),
            Err(e) if e.kind() == ErrorKind::NotFound && at != Path::new(".") => {
                at = parent_dir(&at).to_path_buf()
            }
            Err(e) => return Err(fail(e)),
        }
    }
}

/// The descriptor a path names directly: `/dev/stdout`, `/dev/stderr`,
/// `/dev/fd/N`, `/proc/self/fd/N`. Written to as it is, never reopened: a
/// reopen would truncate a `>> log` redirection, and a rename through the
/// link would replace the file the shell opened.
fn descriptor(path: &Path) -> Option<i32> {
    let text = path.to_str()?;
    match text {
        "/dev/stdin" => Some(0),
        "/dev/stdout" => Some(1),
        "/dev/stderr" => Some(2),
        _ => text
            .strip_prefix("/dev/fd/")
            .or_else(|| text.strip_prefix("/proc/self/fd/"))
            .and_then(|n| n.parse().ok()),
    }
}

/// True for "-" and the paths that name standard output itself.
pub fn is_stdout(path: &Path) -> bool {
    path == Path::new("-") || descriptor(path) == Some(1)
}

/// What writing a path would write, to tell two paths apart: an existing
/// file by its device and inode (so links, hard links and `/dev/fd/N` name
/// it too), a file not there yet by its directory, canonical, and its name.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Identity {
    Inode(u64, u64),
    New(PathBuf),
}

fn identity(path: &Path) -> Identity {
    let fd = if is_stdout(path) {
        Some(1)
    } else {
        descriptor(path)
    };
    if let Some(fd) = fd {
        // SAFETY: fstat fills the zeroed struct; a closed descriptor fails.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(fd, &mut st) } == 0 {
            return Identity::Inode(st.st_dev, st.st_ino);
        }
    }
    if let Ok(m) = std::fs::metadata(path) {
        return Identity::Inode(m.dev(), m.ino());
    }
    let target = resolve_links(path);
    let dir = parent_dir(&target);
    let dir = std::fs::canonicalize(dir)
        .or_else(|_| std::path::absolute(dir))
        .unwrap_or_else(|_| dir.to_path_buf());
    Identity::New(match target.file_name() {
        Some(name) => dir.join(name),
        None => dir.join(&target),
    })
}

/// True when writing `a` would write the file `b` names (or would create,
/// when neither exists yet): the one rule for "these paths collide".
pub fn same_file(a: &Path, b: &Path) -> bool {
    identity(a) == identity(b)
}

/// A file a command writes, or one it must leave alone: how messages name
/// it (`--export-json 'x.json'`, `the store 'results.db'`) and its path.
#[derive(Clone, Debug)]
pub struct Named {
    pub what: String,
    pub path: PathBuf,
}

impl Named {
    /// `flag 'path'`, the path made safe to print.
    pub fn flag(flag: &str, path: &Path) -> Named {
        Named {
            what: format!("{flag} '{}'", escape_line(&path.display().to_string())),
            path: path.to_path_buf(),
        }
    }
}

/// Refuses, before anything is written, an output that is one of `kept`
/// (the results store and its journal files, which writing would destroy)
/// or the same file as an earlier output (the later one would silently
/// replace it). One usage error naming both.
pub fn refuse_collisions(outputs: &[Named], kept: &[Named]) -> Result<()> {
    let kept: Vec<(&Named, Identity)> = kept.iter().map(|k| (k, identity(&k.path))).collect();
    let mut seen: Vec<(&Named, Identity)> = Vec::with_capacity(outputs.len());
    for out in outputs {
        let id = identity(&out.path);
        if let Some((k, _)) = kept.iter().find(|(_, k)| *k == id) {
            return Err(OutputError::WouldDestroy {
                what: out.what.clone(),
                kept: k.what.clone(),
            }
            .into());
        }
        if let Some((earlier, _)) = seen.iter().find(|(_, s)| *s == id) {
            return Err(OutputError::SameFile {
                earlier: earlier.what.clone(),
                later: out.what.clone(),
            }
            .into());
        }
        seen.push((out, id));
    }
    Ok(())
}

/// The first bytes of every SQLite database file.
const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// Refuses an output that is an existing SQLite database (followed through
/// links): another results store, or any application's. An export written
/// over it would destroy a history the store checks above do not know of.
pub fn refuse_databases(outputs: &[Named]) -> Result<()> {
    use std::io::Read;
    for out in outputs {
        if is_stdout(&out.path) || descriptor(&out.path).is_some() {
            continue;
        }
        let is_db = std::fs::metadata(&out.path).is_ok_and(|m| m.is_file())
            && std::fs::File::open(&out.path).is_ok_and(|mut f| {
                let mut head = [0u8; 16];
                f.read_exact(&mut head).is_ok() && &head == SQLITE_HEADER
            });
        if is_db {
            return Err(OutputError::Database(out.what.clone()).into());
        }
    }
    Ok(())
}

/// Refuses standard output or standard error being one of `kept`
/// (`cmdscope history --store s.db >> s.db`): what is printed would be
/// written into the store.
pub fn refuse_streams_into(kept: &[Named]) -> Result<()> {
    let kept: Vec<(&Named, Identity)> = kept.iter().map(|k| (k, identity(&k.path))).collect();
    for (what, path) in [
        ("standard output", "/dev/stdout"),
        ("standard error", "/dev/stderr"),
    ] {
        let id = identity(Path::new(path));
        if let Some((k, _)) = kept.iter().find(|(_, k)| *k == id) {
            return Err(OutputError::StdoutWouldDestroy {
                what: what.to_string(),
                kept: k.what.clone(),
            }
            .into());
        }
    }
    Ok(())
}

/// Writes `content` to `path` following the rules of this module, or to
/// standard output for "-".
pub fn write_file(path: &Path, content: &[u8]) -> Result<()> {
    if is_stdout(path) {
        print_bytes(content);
        return Ok(());
    }
    if let Some(fd) = descriptor(path) {
        use std::os::fd::FromRawFd;
        // SAFETY: the descriptor is borrowed, never closed (ManuallyDrop);
        // a descriptor that is not open fails the write with EBADF.
        let mut f = std::mem::ManuallyDrop::new(unsafe { File::from_raw_fd(fd) });
        return f
            .write_all(content)
            .and_then(|_| f.flush())
            .map_err(|e| write_error(path, e));
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(Error::Write {
            path: path.into(),
            source: std::io::Error::other("is a directory"),
        }),
        Ok(m) if m.is_file() && m.nlink() == 1 => {
            let target = resolve_links(path);
            match replace_atomically(&target, content, Some(&m)) {
                // A directory we may not create files in, around a file we
                // may write: write in place rather than fail.
                Err(e) if e.kind() == ErrorKind::PermissionDenied => {
                    write_in_place(path, content).map_err(|e| write_error(path, e))
                }
                other => other.map_err(|e| write_error(path, e)),
            }
        }
        Ok(_) => write_in_place(path, content).map_err(|e| write_error(path, e)),
        Err(e) if e.kind() == ErrorKind::NotFound => {
            let target = resolve_links(path);
            replace_atomically(&target, content, None).map_err(|e| write_error(path, e))
        }
        Err(e) => Err(write_error(path, e)),
    }
}

/// Writes `content` as the file `name` of the generated directory `dir`:
/// a temporary file in `dir` renamed over `name`, whatever `name` is now
/// (a link is replaced, not followed; see the module documentation). A
/// directory of that name is refused, never removed.
pub fn replace_in_dir(dir: &Path, name: &str, content: &[u8]) -> Result<()> {
    let path = dir.join(name);
    // Our own names, one plain component each: nothing to resolve.
    if Path::new(name).file_name() != Some(std::ffi::OsStr::new(name)) {
        return Err(write_error(
            &path,
            std::io::Error::from(ErrorKind::InvalidInput),
        ));
    }
    let existing = match std::fs::symlink_metadata(&path) {
        Ok(m) if m.is_dir() => {
            return Err(Error::Write {
                path,
                source: std::io::Error::other("is a directory"),
            })
        }
        Ok(m) if m.is_file() => Some(m),
        Ok(_) => None,
        Err(e) if e.kind() == ErrorKind::NotFound => None,
        Err(e) => return Err(write_error(&path, e)),
    };
    replace_atomically(&path, content, existing.as_ref()).map_err(|e| write_error(&path, e))
}

fn write_in_place(path: &Path, content: &[u8]) -> std::io::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .truncate(true)
        .create(true)
        .mode(0o666)
        .open(path)?;
    f.write_all(content)?;
    f.flush()?;
    // Devices and pipes may not support fsync; a regular file must.
    if f.metadata()?.is_file() {
        f.sync_all()?;
    }
    Ok(())
}

/// Temporary file next to `target`, then rename over it. `existing` is the
/// file being replaced, whose mode and owner the new one keeps.
fn replace_atomically(
    target: &Path,
    content: &[u8],
    existing: Option<&std::fs::Metadata>,
) -> std::io::Result<()> {
    let dir = parent_dir(target);
    // 0666 goes through the umask, as for any new file.
    let mut tmp = tempfile::Builder::new()
        .prefix(".cmdscope-")
        .permissions(Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    if let Some(m) = existing {
        let file: &File = tmp.as_file();
        // Owner first: chown may clear set-id bits that the chmod restores.
        // SAFETY: fchown on a descriptor we own; failure (not root) is fine.
        unsafe {
            use std::os::fd::AsRawFd;
            let _ = libc::fchown(file.as_raw_fd(), m.uid(), m.gid());
        }
        file.set_permissions(Permissions::from_mode(m.mode() & 0o7777))?;
    }
    tmp.write_all(content)?;
    tmp.as_file().sync_all()?;
    tmp.persist(target).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, FileTypeExt};

    fn umask() -> u32 {
        // SAFETY: umask only swaps the process mask; it is restored at once.
        unsafe {
            let old = libc::umask(0o022);
            libc::umask(old);
            old as u32
        }
    }

    #[test]
    fn control_characters_are_made_visible() {
        assert_eq!(escape_controls("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(
            escape_controls("a\x1b[2Jb\x07c\rd\u{202e}e\u{9b}f\x7f"),
            "a\\u{1b}[2Jb\\u{7}c\\u{d}d\\u{202e}e\\u{9b}f\\u{7f}"
        );
        assert_eq!(escape_controls("\x1b]0;title\x07"), "\\u{1b}]0;title\\u{7}");
    }

    #[test]
    fn replaces_regular_files_and_refuses_bad_paths() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.json");
        write_file(&p, b"one").unwrap();
        assert_eq!(
            std::fs::metadata(&p).unwrap().mode() & 0o777,
            0o666 & !umask(),
            "new files follow the umask"
        );
        write_file(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert!(check_writable(&p).is_ok());
        assert!(check_writable(dir.path()).is_err());
        assert!(check_writable(&dir.path().join("missing/x.json")).is_err());
        assert!(write_file(dir.path(), b"x").is_err());
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temp files left"
        );
    }

    #[test]
    fn a_generated_directorys_files_are_replaced_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let outside = d.join("outside");
        std::fs::write(&outside, "precious").unwrap();
        let site = d.join("site");
        std::fs::create_dir(&site).unwrap();
        symlink(&outside, site.join("index.html")).unwrap();
        let fifo = site.join("page.html");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: valid path string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        std::fs::write(site.join("kept.html"), "old").unwrap();
        std::fs::set_permissions(site.join("kept.html"), Permissions::from_mode(0o640)).unwrap();
        for name in ["index.html", "page.html", "kept.html", "new.html"] {
            replace_in_dir(&site, name, b"generated").unwrap();
            let m = std::fs::symlink_metadata(site.join(name)).unwrap();
            assert!(m.is_file(), "{name}");
            assert_eq!(std::fs::read(site.join(name)).unwrap(), b"generated");
        }
        assert_eq!(std::fs::read(&outside).unwrap(), b"precious");
        let mode = |n: &str| std::fs::metadata(site.join(n)).unwrap().mode() & 0o777;
        assert_eq!(mode("kept.html"), 0o640);
        assert_eq!(mode("new.html"), 0o666 & !umask());
        std::fs::create_dir(site.join("sub")).unwrap();
        assert!(replace_in_dir(&site, "sub", b"x").is_err());
        assert!(replace_in_dir(&site, "../escape", b"x").is_err());
        assert_eq!(
            std::fs::read_dir(&site).unwrap().count(),
            5,
            "no temp files left"
        );
    }

    #[test]
    fn keeps_mode_links_and_special_files() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        // Mode kept.
        let f = d.join("mode.json");
        std::fs::write(&f, "old").unwrap();
        std::fs::set_permissions(&f, Permissions::from_mode(0o640)).unwrap();
        write_file(&f, b"new").unwrap();
        assert_eq!(std::fs::metadata(&f).unwrap().mode() & 0o777, 0o640);
        assert_eq!(std::fs::read(&f).unwrap(), b"new");
        // Symbolic link: stays a link, its target gets the content.
        let target = d.join("target.json");
        std::fs::write(&target, "old").unwrap();
        let link = d.join("link.json");
        symlink("target.json", &link).unwrap();
        write_file(&link, b"through").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"through");
        // A dangling link creates its target.
        let dangling = d.join("dangling.json");
        symlink("created.json", &dangling).unwrap();
        write_file(&dangling, b"made").unwrap();
        assert!(std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(d.join("created.json")).unwrap(), b"made");
        // Hard links stay one file.
        let a = d.join("a.json");
        let b = d.join("b.json");
        std::fs::write(&a, "old").unwrap();
        std::fs::hard_link(&a, &b).unwrap();
        write_file(&a, b"both").unwrap();
        assert_eq!(std::fs::read(&b).unwrap(), b"both");
        assert_eq!(std::fs::metadata(&a).unwrap().nlink(), 2);
        // A FIFO stays a FIFO and is written in place.
        let fifo = d.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: valid path string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        write_file(&fifo, b"piped").unwrap();
        assert_eq!(reader.join().unwrap(), b"piped");
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
        // /dev/null stays a device.
        write_file(Path::new("/dev/null"), b"gone").unwrap();
        assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
        let leftovers: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().starts_with(".cmdscope-"))
            .collect();
        assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    }

    #[test]
    fn an_sqlite_database_is_never_an_output() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("other.db");
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
        drop(c);
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&db, &link).unwrap();
        let text = dir.path().join("old.json");
        std::fs::write(&text, "{}").unwrap();
        for path in [&db, &link] {
            let e = refuse_databases(&[Named::flag("--export-json", path)]).unwrap_err();
            assert!(e.to_string().contains("is an SQLite database"), "{e}");
        }
        // An ordinary file, a new one, standard output: written as before.
        let new = dir.path().join("new.json");
        for path in [text.as_path(), new.as_path(), Path::new("-")] {
            refuse_databases(&[Named::flag("--export-json", path)]).unwrap();
        }
    }

    #[test]
    fn paths_that_write_one_file_collide_and_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let a = d.join("a");
        std::fs::write(&a, "x").unwrap();
        symlink("a", d.join("link")).unwrap();
        std::fs::hard_link(&a, d.join("hard")).unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        symlink("new", d.join("dangling")).unwrap();
        assert!(same_file(&a, &d.join("link")));
        assert!(same_file(&a, &d.join("hard")));
        assert!(same_file(&a, &d.join("sub/../a")));
        // Files not there yet: by directory and name, links followed.
        assert!(same_file(&d.join("new"), &d.join("sub/../new")));
        assert!(same_file(&d.join("new"), &d.join("dangling")));
        assert!(!same_file(&d.join("new"), &d.join("other")));
        assert!(!same_file(&a, &d.join("new")));
        let named = |flag: &str, name: &str| Named::flag(flag, &d.join(name));
        let store = [Named {
            what: "the store".into(),
            path: a.clone(),
        }];
        let e = refuse_collisions(&[named("--json", "x"), named("--csv", "link")], &store)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--csv '") && e.contains("/link' is the store"),
            "{e}"
        );
        let e = refuse_collisions(&[named("--json", "new"), named("--csv", "dangling")], &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("are the same file"), "{e}");
        assert!(refuse_collisions(&[named("--json", "x"), named("--csv", "y")], &store).is_ok());
        assert_eq!(std::fs::read(&a).unwrap(), b"x", "nothing written");
    }

    #[test]
    fn errors_name_the_users_path_only() {
        let dir = tempfile::tempdir().unwrap();
        // A path below a regular file fails for root too.
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        let p = file.join("x.json");
        let e = write_file(&p, b"x").unwrap_err().to_string();
        let prefix = format!("cannot write '{}': ", p.display());
        let rest = e.strip_prefix(&prefix).unwrap_or_else(|| panic!("{e}"));
        assert!(!rest.contains('/'), "another path in the message: {e}");
        assert!(check_writable(&p).is_err());
    }
}
