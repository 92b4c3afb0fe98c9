//! The spawner's protocol (see spawner.c): message kinds and flags, the
//! fixed-size report of one run, and the socket's sends and receives
//! (descriptors passed as SCM_RIGHTS).

use super::*;

// Message types and flags of the spawner protocol: see spawner.c.
pub(super) const MSG_PREPARE: u32 = 1;
pub(super) const MSG_RUN: u32 = 2;
pub(super) const MSG_GO: u32 = 3;
pub(super) const MSG_PID: u32 = 4;
pub(super) const MSG_RESULT: u32 = 5;
pub(super) const MSG_SCHEDULE: u32 = 6;
pub(super) const MSG_DONE: u32 = 7;
pub(super) const MSG_RESUME: u32 = 8;
pub(super) const MSG_STARTED: u32 = 9;
pub(super) const MSG_RUN_ENV: u32 = 10;
pub(super) const MSG_FORK: u32 = 11;
/// The most copies one FORK asks for (spawner.c's FORK_MAX).
pub const FORK_MAX: usize = 32;
/// The most variables one run may set of its own (`RUN_ENV_MAX` in spawner.c).
pub const RUN_ENV_MAX: usize = 64;
pub(super) const S_STOP_ON_FAILURE: u32 = 1;
/// The most runs one SCHEDULE message may hold (`SCHEDULE_MAX` in spawner.c).
pub const SCHEDULE_MAX: usize = 256;
pub(super) const F_CWD: u32 = 1;
pub(super) const F_NICE: u32 = 2;
pub(super) const F_CPUS: u32 = 4;
pub(super) const F_USER: u32 = 8;
pub(super) const F_COUNTERS: u32 = 16;
pub(super) const F_PROC_IO: u32 = 32;
pub(super) const F_CGROUP: u32 = 64;
pub(super) const F_STARTED: u32 = 128;

/// One run as the spawner reports it (`struct result` in spawner.c).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(super) struct RunResult {
    pub(super) pid: i64,
    pub(super) status: i64,
    pub(super) failed_step: i64,
    pub(super) error: i64,
    pub(super) start_sec: i64,
    pub(super) start_nsec: i64,
    pub(super) end_sec: i64,
    pub(super) end_nsec: i64,
    pub(super) utime_sec: i64,
    pub(super) utime_usec: i64,
    pub(super) stime_sec: i64,
    pub(super) stime_usec: i64,
    pub(super) maxrss_kib: i64,
    pub(super) minflt: i64,
    pub(super) majflt: i64,
    pub(super) nvcsw: i64,
    pub(super) nivcsw: i64,
    pub(super) io_ok: i64,
    pub(super) rchar: u64,
    pub(super) wchar: u64,
    pub(super) read_bytes: u64,
    pub(super) write_bytes: u64,
    pub(super) cancelled_write_bytes: u64,
    pub(super) leftovers: i64,
    /// A scheduled run's number among the runs handed over (see
    /// [`Spawner::schedule`]); -1 for a run made alone.
    pub(super) serial: i64,
    /// The spawner was stopped during the run (a command stopped its
    /// parent) and continued: its clock ran on across the stop.
    pub(super) stopped: i64,
}

impl RunResult {
    /// Fills `sample` with every metric the report holds, or says which
    /// step of starting the command failed, with its errno.
    pub(super) fn fill(&self, sample: &mut Sample) -> std::result::Result<(), (&'static str, i32)> {
        let res = self;
        if res.failed_step != 0 {
            let step = match res.failed_step {
                1 => "starting a process",
                2 => "redirecting input or output",
                3 => "changing to the working directory",
                4 => "setting the niceness (below 0 needs root)",
                5 => "pinning to --cpus",
                6 => "switching user",
                7 => "waiting for the perf counters",
                9 => "creating its process group",
                10 => "joining the session's cgroup",
                _ => "exec",
            };
            return Err((step, res.error as i32));
        }
        let wall =
            (res.end_sec - res.start_sec) as f64 + (res.end_nsec - res.start_nsec) as f64 * 1e-9;
        sample.set(Metric::WallTime, wall);
        if res.io_ok != 0 {
            sample.set(Metric::IoReadBytes, res.read_bytes as f64);
            // Net of writes truncated away before reaching storage.
            sample.set(
                Metric::IoWriteBytes,
                res.write_bytes.saturating_sub(res.cancelled_write_bytes) as f64,
            );
            sample.set(Metric::IoReadChars, res.rchar as f64);
            sample.set(Metric::IoWriteChars, res.wchar as f64);
        }

        let user = timeval_seconds(res.utime_sec, res.utime_usec);
        let sys = timeval_seconds(res.stime_sec, res.stime_usec);
        sample.set(Metric::UserTime, user);
        sample.set(Metric::SystemTime, sys);
        sample.set(Metric::CpuTime, user + sys);
        sample.set(Metric::PeakRss, res.maxrss_kib as f64 * 1024.0);
        sample.set(Metric::MinorFaults, res.minflt as f64);
        sample.set(Metric::MajorFaults, res.majflt as f64);
        sample.set(Metric::VoluntaryCtx, res.nvcsw as f64);
        sample.set(Metric::InvoluntaryCtx, res.nivcsw as f64);
        let status = res.status as i32;
        if libc::WIFEXITED(status) {
            sample.exit_code = Some(libc::WEXITSTATUS(status));
        } else if libc::WIFSIGNALED(status) {
            sample.signal = Some(libc::WTERMSIG(status));
        }
        Ok(())
    }
}

/// A RESULT message: header and report.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(super) struct Reply {
    pub(super) kind: u32,
    pub(super) len: u32,
    pub(super) res: RunResult,
}

/// One `sendmsg` of `bytes` on `sock`, with `fds` (at most [`FORK_MAX`])
/// as SCM_RIGHTS: the bytes sent.
pub(super) fn send_part(sock: i32, bytes: &[u8], fds: &[i32]) -> std::io::Result<usize> {
    let mut iov = libc::iovec {
        iov_base: bytes.as_ptr() as *mut libc::c_void,
        iov_len: bytes.len(),
    };
    // The header (two u64) and FORK_MAX descriptors of four bytes.
    let mut control = [0u64; 2 + FORK_MAX / 2];
    // SAFETY: msghdr is plain data; every pointer outlives the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if !fds.is_empty() {
        let fds = &fds[..fds.len().min(FORK_MAX)];
        let len = std::mem::size_of_val(fds) as u32;
        // SAFETY: control is large enough for FORK_MAX descriptors.
        unsafe {
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = libc::CMSG_SPACE(len) as _;
            let cm = libc::CMSG_FIRSTHDR(&msg);
            (*cm).cmsg_level = libc::SOL_SOCKET;
            (*cm).cmsg_type = libc::SCM_RIGHTS;
            (*cm).cmsg_len = libc::CMSG_LEN(len) as _;
            std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(cm).cast(), fds.len());
        }
    }
    // SAFETY: msg describes valid buffers.
    let n = unsafe { libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// A connected pair of Unix sockets of `kind` (`SOCK_STREAM`,
/// `SOCK_DGRAM`), close-on-exec.
pub fn socket_pair(
    kind: libc::c_int,
) -> std::io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut pair = [-1; 2];
    // SAFETY: pair holds two ints.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            kind | libc::SOCK_CLOEXEC,
            0,
            pair.as_mut_ptr(),
        )
    } != 0
    {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned here.
    Ok(unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(pair[0]),
            std::os::fd::OwnedFd::from_raw_fd(pair[1]),
        )
    })
}

/// Passes a copy of descriptor `fd` to the process at the other end of
/// the datagram socket `sock` ([`receive_descriptor`]).
pub fn send_descriptor(sock: i32, fd: i32) -> std::io::Result<()> {
    loop {
        match send_part(sock, &[0], &[fd]) {
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            r => return r.map(|_| ()),
        }
    }
}

/// The descriptor the next message on socket `sock` carries
/// ([`send_descriptor`]), close-on-exec.
pub fn receive_descriptor(sock: i32) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut control = [0u64; 8];
    // SAFETY: msghdr is plain data; every pointer outlives the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    loop {
        // SAFETY: msg describes valid buffers.
        let n = unsafe { libc::recvmsg(sock, &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n >= 0 {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
    // SAFETY: the kernel filled msg's control buffer; a descriptor it
    // carries is new in this process and owned here.
    unsafe {
        let cm = libc::CMSG_FIRSTHDR(&msg);
        if cm.is_null()
            || (*cm).cmsg_level != libc::SOL_SOCKET
            || (*cm).cmsg_type != libc::SCM_RIGHTS
        {
            return Err(std::io::Error::other("no descriptor came"));
        }
        let mut fd = -1i32;
        std::ptr::copy_nonoverlapping(libc::CMSG_DATA(cm).cast::<i32>(), &mut fd, 1);
        Ok(std::os::fd::OwnedFd::from_raw_fd(fd))
    }
}

/// A reply as its bytes, to be read into.
pub(super) fn reply_bytes(reply: &mut Reply) -> &mut [u8] {
    // SAFETY: Reply is plain data, viewed as its bytes.
    unsafe {
        std::slice::from_raw_parts_mut(
            (reply as *mut Reply).cast::<u8>(),
            std::mem::size_of::<Reply>(),
        )
    }
}

/// The reports of scheduled runs left unread in the spawner's socket
/// `socket` (a copy of cmdscope's end) once cmdscope is gone: each run's
/// serial number (see [`Spawner::next_serial`]) and its sample, as
/// [`Prepared::take`] would have filled it, in the order made; runs that
/// could not start are left out. Reads until the spawner has closed its
/// end (it writes the reports of the runs that ended before cmdscope's
/// death, then exits), waiting at most `patience` for each message.
pub fn unread_reports(socket: std::os::fd::RawFd, patience: Duration) -> Vec<(u64, Sample)> {
    let mut out = Vec::new();
    let mut reply = Reply::default();
    loop {
        let mut header = [0u8; 8];
        if !read_within(socket, &mut header, patience) {
            break;
        }
        let kind = u32::from_ne_bytes([header[0], header[1], header[2], header[3]]);
        let len = u32::from_ne_bytes([header[4], header[5], header[6], header[7]]) as usize;
        match kind {
            MSG_DONE => continue,
            MSG_RESULT if len == std::mem::size_of::<RunResult>() => {}
            // Not a schedule's message: nothing after it can be read as one.
            _ => break,
        }
        if !read_within(socket, &mut reply_bytes(&mut reply)[8..], patience) {
            break;
        }
        let res = reply.res;
        let mut sample = Sample::new(0);
        if res.serial >= 0 && res.stopped == 0 && res.fill(&mut sample).is_ok() {
            sample.scheduled = Some(res.serial as u64);
            out.push((res.serial as u64, sample));
        }
    }
    out
}

/// Reads exactly `buf.len()` bytes, waiting at most `patience` for each
/// part; false at the end of the stream, an error or the wait's end.
pub(super) fn read_within(fd: std::os::fd::RawFd, buf: &mut [u8], patience: Duration) -> bool {
    let mut got = 0;
    while got < buf.len() {
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = patience.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut pfd, 1, ms) };
        if ready < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        if ready <= 0 {
            return false;
        }
        // SAFETY: the rest of buf is valid for writing.
        let n = unsafe { libc::read(fd, buf[got..].as_mut_ptr().cast(), buf.len() - got) };
        if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        if n <= 0 {
            return false;
        }
        got += n as usize;
    }
    true
}

/// The request for one run of prepared command `id`. Without variables of
/// its own, RUN: the header alone, its length field holding the id, as
/// every run sends. With them, RUN_ENV {id, count, NAME=VALUE NUL ...}: the
/// command's environment with each NAME set to VALUE for this run only.
/// A name that is empty or holds `=` or NUL, or a value that holds NUL,
/// cannot be passed to exec and is refused; any other bytes are carried
/// as they are (an environment is bytes, not text).
pub(super) fn run_request(id: u32, vars: &[(&[u8], &[u8])]) -> Result<Vec<u8>> {
    if vars.is_empty() {
        return Ok(header(MSG_RUN, id as usize));
    }
    if vars.len() > RUN_ENV_MAX {
        return Err(ExecError::TooManyRunVariables(RUN_ENV_MAX).into());
    }
    let mut body = Vec::new();
    body.extend_from_slice(&id.to_ne_bytes());
    body.extend_from_slice(&(vars.len() as u32).to_ne_bytes());
    for (name, value) in vars {
        if name.is_empty() || name.contains(&b'=') || name.contains(&0) || value.contains(&0) {
            return Err(
                ExecError::BadVariableName(String::from_utf8_lossy(name).into_owned()).into(),
            );
        }
        body.extend_from_slice(name);
        body.push(b'=');
        body.extend_from_slice(value);
        body.push(0);
    }
    if body.len() > u32::MAX as usize {
        return Err(ExecError::RunVariablesTooLarge.into());
    }
    let mut message = header(MSG_RUN_ENV, body.len());
    message.extend_from_slice(&body);
    Ok(message)
}

pub(super) fn header(kind: u32, len: usize) -> Vec<u8> {
    let mut v = kind.to_ne_bytes().to_vec();
    v.extend_from_slice(&(len as u32).to_ne_bytes());
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u32_at(b: &[u8], at: usize) -> u32 {
        u32::from_ne_bytes(b[at..at + 4].try_into().unwrap())
    }

    #[test]
    fn a_run_without_variables_is_the_header_alone() {
        let m = run_request(7, &[]).unwrap();
        assert_eq!(m, header(MSG_RUN, 7));
        assert_eq!(m.len(), 8);
    }

    #[test]
    fn a_runs_variables_follow_its_id_and_count_each_ended_by_nul() {
        let value = b"a=b\xff\xfe".as_slice();
        let m = run_request(3, &[(b"ONE", b""), (b"TWO", value)]).unwrap();
        assert_eq!(u32_at(&m, 0), MSG_RUN_ENV);
        assert_eq!(u32_at(&m, 4) as usize, m.len() - 8);
        assert_eq!(u32_at(&m, 8), 3);
        assert_eq!(u32_at(&m, 12), 2);
        // Read back as the spawner does: NUL-ended NAME=VALUE strings,
        // the name up to the first '=' (a value may hold more of them).
        let vars: Vec<(&[u8], &[u8])> = m[16..]
            .split(|&b| b == 0)
            .filter(|s| !s.is_empty())
            .map(|s| {
                let eq = s.iter().position(|&b| b == b'=').unwrap();
                (&s[..eq], &s[eq + 1..])
            })
            .collect();
        assert_eq!(vars, [(b"ONE".as_slice(), b"".as_slice()), (b"TWO", value)]);
        assert_eq!(m.last(), Some(&0));
    }

    #[test]
    fn what_exec_cannot_pass_is_refused() {
        for (name, value) in [
            (b"".as_slice(), b"x".as_slice()),
            (b"A=B", b"x"),
            (b"A\0", b"x"),
            (b"A", b"x\0y"),
        ] {
            let e = run_request(0, &[(name, value)]).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{e}");
        }
        let many = vec![(b"A".as_slice(), b"1".as_slice()); RUN_ENV_MAX + 1];
        assert!(run_request(0, &many).is_err());
        assert!(run_request(0, &many[..RUN_ENV_MAX]).is_ok());
    }
}
