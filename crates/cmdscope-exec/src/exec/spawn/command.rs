//! What a command is started with: its output and input, the spawn
//! configuration, the user it runs as, its environment (and the exec size
//! limit it must fit), and where its program is found.

use super::*;

/// Where the child's stdout/stderr go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// /dev/null (the default: output costs nothing).
    Null,
    /// A pipe the harness drains and counts, like a terminal or a consumer would.
    Pipe,
    /// The harness's own stdout/stderr (`--show-output`).
    Inherit,
    /// Written to a file, emptied before each run (each run sees the same file).
    File(PathBuf),
}

/// Where the child's stdin comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    Null,
    File(PathBuf),
}

/// Everything needed to prepare a command once for many runs.
#[derive(Clone, Debug)]
pub struct SpawnConfig {
    /// Program and arguments, as bytes (non-UTF-8 is kept, not rejected).
    pub argv: Vec<Vec<u8>>,
    /// Extra environment variables on top of the inherited environment.
    pub env: Vec<(Vec<u8>, Vec<u8>)>,
    pub input: Input,
    pub output: Output,
    pub timeout: Option<Duration>,
    /// Open perf counters on each child before it execs (see `Prepared::run`).
    pub counters: Option<Availability>,
    /// Read `/proc/<pid>/io` per run.
    pub proc_io: bool,
    /// Start from an empty environment instead of the inherited one.
    pub clear_env: bool,
    /// Synthetic variables to add (huge-environment conditions).
    pub env_size: usize,
    /// Working directory of the command.
    pub cwd: Option<PathBuf>,
    /// Run as this user (name or uid), with the user's groups.
    pub user: Option<String>,
    pub cpus: Option<Vec<usize>>,
    pub nice: Option<i32>,
}

impl SpawnConfig {
    pub fn new(argv: Vec<Vec<u8>>) -> SpawnConfig {
        SpawnConfig {
            argv,
            env: Vec::new(),
            input: Input::Null,
            output: Output::Null,
            timeout: None,
            counters: None,
            proc_io: true,
            clear_env: false,
            env_size: 0,
            cwd: None,
            user: None,
            cpus: None,
            nice: None,
        }
    }
}

/// A user to switch to, resolved once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Credentials {
    pub uid: libc::uid_t,
    pub gid: libc::gid_t,
    pub groups: Vec<libc::gid_t>,
}

/// Resolves a user name or numeric uid, with the user's supplementary groups.
pub fn resolve_user(user: &str) -> Result<Credentials> {
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16384];
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    let name = cstring(user.as_bytes(), "--user")?;
    // SAFETY: all pointers are valid; getpw*_r write into pwd and buf only.
    let rc = unsafe {
        match user.parse::<libc::uid_t>() {
            Ok(uid) => libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut result),
            Err(_) => libc::getpwnam_r(
                name.as_ptr(),
                &mut pwd,
                buf.as_mut_ptr(),
                buf.len(),
                &mut result,
            ),
        }
    };
    if result.is_null() {
        if let Ok(uid) = user.parse::<libc::uid_t>() {
            // A uid without a passwd entry: run with it and its own gid.
            return Ok(Credentials {
                uid,
                gid: uid,
                groups: vec![uid],
            });
        }
        return Err(if rc != 0 {
            ExecError::UserLookup {
                user: user.into(),
                errno: rc,
            }
        } else {
            ExecError::NoSuchUser(user.into())
        }
        .into());
    }
    let (uid, gid) = (pwd.pw_uid, pwd.pw_gid);
    let mut groups = vec![0 as libc::gid_t; 256];
    let mut n = groups.len() as libc::c_int;
    // SAFETY: pw_name points into buf, valid here; groups holds n entries.
    let ok = unsafe { libc::getgrouplist(pwd.pw_name, gid, groups.as_mut_ptr(), &mut n) };
    groups.truncate(if ok < 0 { 0 } else { n.max(0) as usize });
    if groups.is_empty() {
        groups.push(gid);
    }
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if me != 0 && me != uid {
        return Err(ExecError::SwitchUserNeedsRoot {
            user: user.into(),
            uid: me,
        }
        .into());
    }
    Ok(Credentials { uid, gid, groups })
}

/// The environment a command gets, as `KEY=VALUE` strings: inherited
/// variables (unless cleared), with `env` overriding, then `env_size`
/// synthetic variables. Built once per cell (`run` and `explain` alike),
/// and refused before it is built when exec could never take it with
/// `argv` ([`check_exec_size`]).
pub fn environment(
    argv: &[Vec<u8>],
    env: &[(Vec<u8>, Vec<u8>)],
    clear_env: bool,
    env_size: usize,
) -> Result<Vec<CString>> {
    let mut all: Vec<(Vec<u8>, Vec<u8>)> = if clear_env {
        Vec::new()
    } else {
        std::env::vars_os()
            .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect()
    };
    for (k, v) in env {
        all.retain(|(ek, _)| ek != k);
        all.push((k.clone(), v.clone()));
    }
    check_exec_size(argv, &all, env_size)?;
    for i in 0..env_size {
        all.push((pad_name(i).into_bytes(), vec![b'x'; PAD_VALUE]));
    }
    all.iter()
        .map(|(k, v)| {
            let mut kv = k.clone();
            kv.push(b'=');
            kv.extend_from_slice(v);
            cstring(&kv, "an environment variable")
        })
        .collect()
}

/// `--env-size`'s variables: CMDSCOPE_PAD_0000001=xxx... (32 bytes).
fn pad_name(i: usize) -> String {
    format!("CMDSCOPE_PAD_{i:07}")
}
const PAD_VALUE: usize = 32;

/// What exec counts for one string: its bytes, its NUL and its pointer.
fn exec_cost(bytes: usize) -> usize {
    bytes + 1 + std::mem::size_of::<usize>()
}

/// Bytes of argument and environment strings (with their pointers) exec
/// takes with this process's stack limit, which commands inherit: a
/// quarter of it, at most 6 MiB (three quarters of the kernel's 8 MiB
/// `_STK_LIM`), at least 128 KiB (`ARG_MAX`); and the longest one string
/// (`MAX_ARG_STRLEN`, 32 pages, with its NUL).
pub fn exec_limits() -> (usize, usize) {
    // SAFETY: getrlimit fills the struct; sysconf has no preconditions.
    let (stack, page) = unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        let stack = if libc::getrlimit(libc::RLIMIT_STACK, &mut r) == 0 {
            r.rlim_cur
        } else {
            libc::RLIM_INFINITY
        };
        (stack, libc::sysconf(libc::_SC_PAGESIZE).max(4096) as usize)
    };
    let quarter = usize::try_from(stack / 4).unwrap_or(usize::MAX);
    (quarter.clamp(128 << 10, 6 << 20), 32 * page)
}

/// Refuses what exec could never take: a string longer than one string may
/// be, or arguments and environment (`env`, plus `env_size` padding
/// variables) larger than [`exec_limits`] allows together, counting the
/// program's path as long as its first word. Checked before the padding
/// is built, so `--env-size 10000000` is one line, not gigabytes.
pub fn check_exec_size(
    argv: &[Vec<u8>],
    env: &[(Vec<u8>, Vec<u8>)],
    env_size: usize,
) -> Result<()> {
    let (total, longest) = exec_limits();
    let strings = argv.iter().map(Vec::len).chain(argv.first().map(Vec::len));
    let vars = env.iter().map(|(k, v)| k.len() + 1 + v.len());
    if let Some(len) = strings
        .clone()
        .chain(vars.clone())
        .find(|&l| l + 1 > longest)
    {
        return Err(ExecError::StringTooLong {
            len,
            max: longest - 1,
        }
        .into());
    }
    let fixed: usize = strings.chain(vars).map(exec_cost).sum();
    let pad = exec_cost(pad_name(0).len() + 1 + PAD_VALUE);
    let needed = fixed.saturating_add(env_size.saturating_mul(pad));
    if needed <= total {
        return Ok(());
    }
    let room = total.saturating_sub(fixed) / pad;
    Err(ExecError::EnvSizeTooLarge {
        env_size,
        needed,
        total,
        room,
    }
    .into())
}

/// Finds `program` like a shell would: as a path if it has a slash, else in PATH.
pub fn resolve_program(program: &[u8]) -> Result<PathBuf> {
    let shown = String::from_utf8_lossy(program).into_owned();
    if program.is_empty() {
        return Err(ExecError::EmptyCommand.into());
    }
    let check = |p: &Path| -> Option<Result<PathBuf>> {
        let meta = std::fs::metadata(p).ok()?;
        if meta.is_dir() {
            return Some(Err(Error::NotExecutable(format!(
                "{} (a directory)",
                p.display()
            ))));
        }
        let c = CString::new(p.as_os_str().as_bytes()).ok()?;
        // SAFETY: c is a valid NUL-terminated path.
        if unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0 {
            Some(Ok(p.to_path_buf()))
        } else {
            Some(Err(Error::NotExecutable(p.display().to_string())))
        }
    };
    if program.contains(&b'/') {
        let p = Path::new(std::ffi::OsStr::from_bytes(program));
        return check(p).unwrap_or(Err(Error::CommandNotFound(shown)));
    }
    let path_var =
        std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    let mut not_executable = None;
    for dir in std::env::split_paths(&path_var) {
        let candidate = dir.join(std::ffi::OsStr::from_bytes(program));
        match check(&candidate) {
            Some(Ok(p)) => return Ok(p),
            Some(Err(e)) => not_executable = not_executable.or(Some(e)),
            None => {}
        }
    }
    Err(not_executable.unwrap_or(Error::CommandNotFound(shown)))
}
