//! A command prepared once in the spawner, and its runs.

use super::*;

/// A command prepared once in the spawner: path, arguments, environment,
/// redirections and attributes are sent when prepared; a run is one short
/// request and one fixed-size reply.
pub struct Prepared {
    spawner: std::rc::Rc<Spawner>,
    pub(super) id: u32,
    path: CString,
    pipe_read: Fd,
    timeout: Option<Duration>,
    counters: Option<Availability>,
    drain: Vec<u8>,
    /// Bytes of output read from the pipe over all runs.
    pub piped_bytes: u64,
    /// `--input FILE`, kept open to rewind it before every run: the
    /// spawner's copy shares its file position, which the previous run left
    /// at the end.
    rewind: Fd,
    /// `--output FILE`, kept open to empty it before every run, as
    /// hyperfine does (the spawner's copy appends, so it writes from 0).
    truncate: Fd,
    /// Its output goes to the terminal (`--show-output`).
    shown: bool,
    /// When the last run started and ended, on the spawner's clock
    /// (CLOCK_MONOTONIC), in seconds.
    last: Option<(f64, f64)>,
}

impl Prepared {
    pub fn new(spawner: &std::rc::Rc<Spawner>, config: &SpawnConfig) -> Result<Prepared> {
        let Some(program) = config.argv.first() else {
            return Err(ExecError::EmptyCommand.into());
        };
        let resolved = resolve_program(program)?;
        let path = cstring(resolved.as_os_str().as_bytes(), "program path")?;
        let argv = config
            .argv
            .iter()
            .map(|a| cstring(a, "an argument"))
            .collect::<Result<Vec<_>>>()?;

        let envp = environment(&config.argv, &config.env, config.clear_env, config.env_size)?;

        let credentials = config.user.as_deref().map(resolve_user).transpose()?;
        let cwd = config
            .cwd
            .as_ref()
            .map(|c| cstring(c.as_os_str().as_bytes(), "--workdir"))
            .transpose()?;
        let cpus = config.cpus.as_deref().map(cpu_set).transpose()?;
        let devnull = Path::new("/dev/null");
        let stdin = match &config.input {
            Input::Null => open_fd(devnull, libc::O_RDONLY)?,
            Input::File(p) => open_fd(p, libc::O_RDONLY)?,
        };
        let (stdout, stderr, pipe_read) = match &config.output {
            Output::Null => (
                open_fd(devnull, libc::O_WRONLY)?,
                open_fd(devnull, libc::O_WRONLY)?,
                Fd(-1),
            ),
            Output::Inherit => (Fd(-1), Fd(-1), Fd(-1)),
            Output::File(p) => {
                let f = open_fd(
                    p,
                    libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_APPEND,
                )?;
                // SAFETY: f is open.
                let f2 = Fd(unsafe { libc::fcntl(f.0, libc::F_DUPFD_CLOEXEC, 3) });
                (f, f2, Fd(-1))
            }
            Output::Pipe => {
                let mut fds = [0; 2];
                // SAFETY: fds is a valid array of two ints.
                if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0
                {
                    return Err(Error::Io(std::io::Error::last_os_error()));
                }
                // The child's end must block like a normal pipe does.
                // SAFETY: fds[1] is the pipe's write end we just created.
                unsafe { libc::fcntl(fds[1], libc::F_SETFL, 0) };
                let w2 = Fd(unsafe { libc::fcntl(fds[1], libc::F_DUPFD_CLOEXEC, 3) });
                (Fd(fds[1]), w2, Fd(fds[0]))
            }
        };

        let mut flags = F_PROC_IO * u32::from(config.proc_io);
        let mut fds = Vec::new();
        let mut targets = [-1i32; 3];
        for (fd, target) in [(&stdin, 0), (&stdout, 1), (&stderr, 2)] {
            if fd.0 >= 0 {
                targets[fds.len()] = target;
                fds.push(fd.0);
            }
        }
        let (uid, gid, groups) = match &credentials {
            Some(c) => {
                flags |= F_USER;
                (c.uid, c.gid, c.groups.clone())
            }
            None => (0, 0, Vec::new()),
        };
        if cwd.is_some() {
            flags |= F_CWD;
        }
        if config.nice.is_some() {
            flags |= F_NICE;
        }
        if config.counters.is_some() {
            flags |= F_COUNTERS;
        }
        // Joining a cgroup costs a migration per run: only where a timeout
        // may have to kill the tree.
        if config.timeout.is_some() && spawner.has_cgroup() {
            flags |= F_CGROUP;
        }
        // A timeout counts from the run's start, which the spawner says.
        if config.timeout.is_some() {
            flags |= F_STARTED;
        }
        let cpuset_bytes: &[u8] = match &cpus {
            Some(set) => {
                flags |= F_CPUS;
                // SAFETY: cpu_set_t is plain data, viewed as its bytes.
                unsafe {
                    std::slice::from_raw_parts(
                        (set as *const libc::cpu_set_t).cast(),
                        std::mem::size_of::<libc::cpu_set_t>(),
                    )
                }
            }
            None => &[],
        };
        let id = spawner.prepared.get();
        let mut body = Vec::new();
        for v in [id, flags] {
            body.extend_from_slice(&v.to_ne_bytes());
        }
        body.extend_from_slice(&config.nice.unwrap_or(0).to_ne_bytes());
        for v in [
            uid,
            gid,
            groups.len() as u32,
            cpuset_bytes.len() as u32,
            argv.len() as u32,
            envp.len() as u32,
            fds.len() as u32,
        ] {
            body.extend_from_slice(&v.to_ne_bytes());
        }
        for t in targets {
            body.extend_from_slice(&t.to_ne_bytes());
        }
        for g in &groups {
            body.extend_from_slice(&g.to_ne_bytes());
        }
        body.extend_from_slice(cpuset_bytes);
        body.extend_from_slice(path.as_bytes_with_nul());
        if let Some(dir) = &cwd {
            body.extend_from_slice(dir.as_bytes_with_nul());
        }
        for s in argv.iter().chain(&envp) {
            body.extend_from_slice(s.as_bytes_with_nul());
        }
        if body.len() > u32::MAX as usize {
            return Err(ExecError::CommandTooLarge.into());
        }
        let mut message = header(MSG_PREPARE, body.len());
        message.extend_from_slice(&body);
        spawner.send(&message, &fds)?;
        spawner.prepared.set(id + 1);
        // The spawner holds its own copies of the descriptors now; ours
        // stay open only where a run has to reset them.
        let rewind = if matches!(config.input, Input::File(_)) {
            stdin
        } else {
            Fd(-1)
        };
        let truncate = if matches!(config.output, Output::File(_)) {
            stdout
        } else {
            Fd(-1)
        };
        drop(stderr);

        Ok(Prepared {
            spawner: spawner.clone(),
            id,
            path,
            pipe_read,
            timeout: config.timeout,
            counters: config.counters.clone(),
            drain: if config.output == Output::Pipe {
                vec![0; 64 * 1024]
            } else {
                Vec::new()
            },
            piped_bytes: 0,
            rewind,
            truncate,
            shown: config.output == Output::Inherit,
            last: None,
        })
    }

    /// Whether a run of this command may be made from a schedule
    /// ([`Spawner::schedule`]): nothing needs doing around it here (no
    /// timeout to watch, counters to open, output to drain or show, input
    /// to rewind or output file to empty).
    pub fn schedulable(&self) -> bool {
        self.timeout.is_none()
            && self.counters.is_none()
            && self.pipe_read.0 < 0
            && self.rewind.0 < 0
            && self.truncate.0 < 0
            && !self.shown
    }

    /// When the last run started and ended: the spawner's readings of the
    /// clock around it (a run taken from a schedule was timed by it alone).
    pub fn last_span(&self) -> Option<(Instant, Instant)> {
        let (start, end) = self.last?;
        let now = monotonic();
        let then = Instant::now();
        let at = |t: f64| then.checked_sub(Duration::from_secs_f64((now - t).max(0.0)));
        Some((at(start)?, at(end)?))
    }

    /// The resolved program path.
    pub fn program(&self) -> &CStr {
        &self.path
    }

    /// Runs the command once and fills `sample` with every metric measured.
    pub fn run(&mut self, sample: &mut Sample) -> Result<Outcome> {
        self.run_with(&[], sample)
    }

    /// [`Prepared::run`] with variables set for this run only (`vars`:
    /// names and values, see `wire::run_request`): the next run has the
    /// command's environment as prepared again.
    pub fn run_with(&mut self, vars: &[(&[u8], &[u8])], sample: &mut Sample) -> Result<Outcome> {
        let request = run_request(self.id, vars)?;
        // Every run starts from the same state: the input from its first
        // byte, the output file empty. Outside the timed window (the
        // spawner times the run).
        // SAFETY: plain syscalls on descriptors this struct owns; a
        // descriptor that cannot seek (a pipe given as --input) is left as is.
        unsafe {
            if self.rewind.0 >= 0 {
                libc::lseek(self.rewind.0, 0, libc::SEEK_SET);
            }
            if self.truncate.0 >= 0 {
                libc::ftruncate(self.truncate.0, 0);
            }
        }
        let spawner = self.spawner.clone();
        // A report of a schedule cannot be taken for this run's.
        spawner.finish_schedules()?;
        spawner.send(&request, &[])?;

        let mut interrupted = false;
        let mut on_interrupt = || {
            if !interrupted && signals::received().is_some() {
                interrupted = true;
                spawner.kill_run();
            }
        };
        let mut counters = None;
        let mut outcome = Outcome::Finished;
        // The report with its header, read with one call when possible.
        let mut reply = Reply::default();
        let mut whole = true;
        if let Some(avail) = &self.counters {
            // The child reports its pid and waits for the counters, unless
            // a step before failed (then the report comes instead).
            let (kind, len) = spawner.recv_header(&mut on_interrupt)?;
            if kind == MSG_PID {
                let mut pid = [0u8; 4];
                spawner.recv(&mut pid, &mut on_interrupt)?;
                counters = Some(Counters::open(avail, i32::from_ne_bytes(pid)));
                // The waiting child reads this and execs.
                spawner.send(&header(MSG_GO, 0), &[])?;
            } else {
                (reply.kind, reply.len) = (kind, len);
                whole = false;
            }
        }
        // The timeout counts from the moment the spawner started the run,
        // not from our request: on a busy machine the spawner may wake up
        // tens of milliseconds later, and the run would be cut short.
        let mut deadline = None;
        if let (true, Some(timeout)) = (whole, self.timeout) {
            let (kind, len) = spawner.recv_header(&mut on_interrupt)?;
            if kind == MSG_STARTED {
                let mut at = [0u8; 16];
                spawner.recv(&mut at, &mut on_interrupt)?;
                let sec = i64::from_ne_bytes(at[..8].try_into().unwrap_or_default());
                let nsec = i64::from_ne_bytes(at[8..].try_into().unwrap_or_default());
                let since = (monotonic() - (sec as f64 + nsec as f64 * 1e-9)).max(0.0);
                let now = Instant::now();
                deadline = Some(
                    now.checked_sub(Duration::from_secs_f64(since))
                        .unwrap_or(now)
                        + timeout,
                );
            } else {
                // It could not start: its report came instead.
                (reply.kind, reply.len) = (kind, len);
                whole = false;
            }
        }
        if whole && (deadline.is_some() || self.pipe_read.0 >= 0) {
            outcome = self.wait_polling(deadline);
        }
        // SAFETY: Reply is plain data; the slice covers it (whole) or its
        // report part only.
        let bytes = unsafe {
            let all = std::slice::from_raw_parts_mut(
                (&mut reply as *mut Reply).cast::<u8>(),
                std::mem::size_of::<Reply>(),
            );
            if whole {
                all
            } else {
                &mut all[8..]
            }
        };
        spawner.recv(bytes, &mut on_interrupt)?;
        if reply.kind != MSG_RESULT || reply.len as usize != std::mem::size_of::<RunResult>() {
            return Err(Spawner::gone());
        }
        let res = reply.res;
        spawner
            .left_in_spawner
            .set(spawner.left_in_spawner.get() + res.leftovers.max(0) as usize);
        if interrupted {
            outcome = Outcome::Interrupted;
        }
        if outcome != Outcome::Finished {
            // The command itself is reaped now: kill what it left behind.
            spawner.kill_run();
        }
        self.drain_pipe();
        self.fill(&res, sample)?;
        if let Some(c) = &counters {
            c.read_into(sample);
        }
        sample.timed_out = outcome == Outcome::TimedOut;
        Ok(outcome)
    }

    /// The report of the next run the spawner made from its schedule
    /// ([`Spawner::schedule`]), which must be a run of this command: every
    /// metric of [`Prepared::run`] but the counters (a schedule holds no run
    /// with counters, an output pipe, an input to rewind or an output file
    /// to empty). Ctrl-C cuts the schedule and kills the run.
    pub fn take(&mut self, sample: &mut Sample) -> Result<Outcome> {
        let spawner = self.spawner.clone();
        if signals::received().is_some() {
            spawner.interrupt();
        }
        let mut on_interrupt = || {
            if signals::received().is_some() {
                spawner.interrupt();
            }
        };
        let res = match spawner.peeked.take() {
            Some(res) => res,
            None => match spawner.next_report(&mut on_interrupt)? {
                Some(res) => res,
                // The spawner ended its schedules before this run.
                None => return Ok(Outcome::Interrupted),
            },
        };
        self.fill(&res, sample)?;
        sample.scheduled = u64::try_from(res.serial).ok();
        if spawner.interrupted_at.get().is_some() && !spawner.ended_before_interrupt(&res) {
            return Ok(Outcome::Interrupted);
        }
        Ok(Outcome::Finished)
    }

    /// Fills `sample` from the spawner's report of a run, or says why the
    /// command could not start.
    fn fill(&mut self, res: &RunResult, sample: &mut Sample) -> Result<()> {
        self.last = None;
        if let Err((step, errno)) = res.fill(sample) {
            return Err(Error::Spawn {
                command: self.path.to_string_lossy().into_owned(),
                source: std::io::Error::new(
                    std::io::Error::from_raw_os_error(errno).kind(),
                    format!("{step}: {}", std::io::Error::from_raw_os_error(errno)),
                ),
            });
        }
        if res.stopped != 0 && signals::received().is_none() {
            // Its time ran on while the spawner was stopped: not a time
            // of the command's, and no later run would be timed either if
            // it does that every time.
            return Err(Error::Failed(format!(
                "'{}' stopped cmdscope's spawner, its parent process (SIGSTOP to $PPID): \
                 its run cannot be timed (cmdscope continued the spawner and stopped the session)",
                self.path.to_string_lossy()
            )));
        }
        let at = |sec: i64, nsec: i64| sec as f64 + nsec as f64 * 1e-9;
        self.last = Some((
            at(res.start_sec, res.start_nsec),
            at(res.end_sec, res.end_nsec),
        ));
        Ok(())
    }

    /// Waits for the spawner's report while draining the output pipe and
    /// watching the deadline and the harness's signals; kills the command's
    /// tree on a timeout or an interruption. The report itself is left for
    /// the caller to read.
    fn wait_polling(&mut self, deadline: Option<Instant>) -> Outcome {
        let sock = self.spawner.sock.0;
        loop {
            if signals::received().is_some() {
                self.spawner.kill_run();
                return Outcome::Interrupted;
            }
            let wait_ms = match deadline {
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        self.spawner.kill_run();
                        return Outcome::TimedOut;
                    }
                    left.as_micros().div_ceil(1000).clamp(1, STALL.as_millis()) as i32
                }
                None => STALL.as_millis() as i32,
            };
            let mut fds = [
                libc::pollfd {
                    fd: sock,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: self.pipe_read.0,
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            let nfds = if self.pipe_read.0 >= 0 { 2 } else { 1 };
            // SAFETY: fds holds nfds valid pollfd entries.
            let r = unsafe { libc::poll(fds.as_mut_ptr(), nfds, wait_ms) };
            if r > 0 {
                if fds[1].revents != 0 {
                    self.drain_pipe();
                }
                if fds[0].revents != 0 {
                    return Outcome::Finished;
                }
            } else if r == 0 {
                self.spawner.resume_if_stopped();
            }
        }
    }

    fn drain_pipe(&mut self) {
        if self.pipe_read.0 < 0 {
            return;
        }
        loop {
            // SAFETY: drain is a valid buffer; the read end is non-blocking.
            let n = unsafe {
                libc::read(
                    self.pipe_read.0,
                    self.drain.as_mut_ptr().cast(),
                    self.drain.len(),
                )
            };
            if n <= 0 {
                break;
            }
            self.piped_bytes += n as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines `env` (coreutils) printed in its last run.
    fn printed(path: &Path) -> Vec<Vec<u8>> {
        std::fs::read(path)
            .unwrap()
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(<[u8]>::to_vec)
            .collect()
    }

    #[test]
    fn copied_spawners_are_our_children_and_count_their_own_runs() {
        // Confined, as concurrency mode's are: the end of an unconfined
        // spawner kills every process it did not start, the runs of the
        // tests beside this one too.
        let first = Spawner::start(false).unwrap();
        first.confine_kills();
        let copies = first.fork(3).unwrap();
        assert_eq!(copies.len(), 3);
        let config = SpawnConfig::new(vec![
            b"head".to_vec(),
            b"-c".to_vec(),
            b"3000000".to_vec(),
            b"/dev/zero".to_vec(),
        ]);
        let mut pids = Vec::new();
        for copy in copies {
            copy.confine_kills();
            assert_ne!(copy.pid(), first.pid());
            pids.push(copy.pid());
            // cmdscope's child, as every spawner is (it waits for it, and
            // its parent's death reaches it), not the first spawner's.
            let stat = std::fs::read_to_string(format!("/proc/{}/stat", copy.pid())).unwrap();
            let after_name = &stat[stat.rfind(')').unwrap() + 2..];
            let parent: u32 = after_name.split(' ').nth(1).unwrap().parse().unwrap();
            assert_eq!(parent, std::process::id());
            // A run's characters read are its own: each copy reads its own
            // /proc/self/io, not the first spawner's, which never moves.
            let copy = std::rc::Rc::new(copy);
            let mut p = Prepared::new(&copy, &config).unwrap();
            for _ in 0..2 {
                let mut sample = Sample::new(0);
                p.run(&mut sample).unwrap();
                assert_eq!(sample.exit_code, Some(0));
                let read = sample.get(Metric::IoReadChars).unwrap();
                assert!((3e6..3.2e6).contains(&read), "{read} characters read");
            }
        }
        // Their ends are waited for as any spawner's, and the first one
        // still makes copies, as many as one request allows.
        for pid in pids {
            assert!(!Path::new(&format!("/proc/{pid}")).exists());
        }
        let more = first.fork(FORK_MAX + 5).unwrap();
        assert_eq!(more.len(), FORK_MAX);
        for copy in &more {
            copy.confine_kills();
        }
    }

    #[test]
    fn a_runs_own_variables_reach_that_run_only() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("env.txt");
        let spawner = std::rc::Rc::new(Spawner::start(false).unwrap());
        let config = SpawnConfig {
            env: vec![
                (b"KEPT".to_vec(), b"1".to_vec()),
                (b"REPLACED".to_vec(), b"old".to_vec()),
            ],
            clear_env: true,
            output: Output::File(out.clone()),
            ..SpawnConfig::new(vec![b"env".to_vec()])
        };
        let mut p = Prepared::new(&spawner, &config).unwrap();
        let mut sample = Sample::new(0);
        let value = b"a=b\xff".as_slice();
        p.run_with(&[(b"REPLACED", b"new"), (b"ADDED", value)], &mut sample)
            .unwrap();
        assert_eq!(sample.exit_code, Some(0));
        let mut lines = printed(&out);
        lines.sort();
        let mut added = b"ADDED=".to_vec();
        added.extend_from_slice(value);
        assert_eq!(lines, [added, b"KEPT=1".to_vec(), b"REPLACED=new".to_vec()]);
        // The next run without variables has the command's as prepared,
        // and the spawner keeps serving runs with and without them.
        p.run(&mut sample).unwrap();
        let mut lines = printed(&out);
        lines.sort();
        assert_eq!(lines, [b"KEPT=1".to_vec(), b"REPLACED=old".to_vec()]);
        for i in 0..50u32 {
            let v = "X".repeat(i as usize * 80);
            p.run_with(&[(b"BIG", v.as_bytes())], &mut sample).unwrap();
            assert!(printed(&out).contains(&format!("BIG={v}").into_bytes()));
        }
        p.run(&mut sample).unwrap();
        assert_eq!(printed(&out).len(), 2);
    }
}
