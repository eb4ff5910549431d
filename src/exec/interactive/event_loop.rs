//! The server's event loops: each thread runs many sessions as tasks (futures), and a task that
//! waits (for its client's next request, for a protocol event, for a timer) is set aside while
//! its thread runs the others.
//!
//! # Why not an async runtime
//!
//! A session waits for three kinds of thing: its socket, a timer (`--rtt-us`, the idle
//! timeouts), and protocol events, which are not I/O: a lock released, a turn passed on, a
//! batch closed. Protocols announce those through the process's parking lot
//! ([`crate::park`]), never through wakers, because the in-process executors poll and park
//! instead. So the loop needs a poll that waits for sockets *and* for the lot at once, with
//! sub-millisecond timers: `ppoll(2)` on the sessions' sockets and a [`Watcher`] pipe the lot
//! writes to ([`ParkingLot::sleep_watching`]). tokio or mio would bring a reactor whose timers
//! tick in milliseconds (epoll's timeout) and still no way to hear the lot; the loop here is
//! about 300 lines and owns exactly that.
//!
//! # How a task says what it waits for
//!
//! Each task has a [`TaskWait`] it shares with its loop. Before a task returns `Pending` it
//! records there what would let it go on: a descriptor to become readable or writable, a
//! deadline, or a protocol event. The loop polls a task again when its descriptor is ready,
//! its deadline has passed, or (for a protocol wait) on every round: a protocol wait is
//! re-polled as the executors' waits are (`exec::wait`): at once for a short while, then the
//! loop sleeps until a waking event of the lot, a socket, or [`PARK_TIMEOUT`].

use crate::park::{PARK_TIMEOUT, ParkingLot, Watcher};
use std::cell::Cell;
use std::future::{Future, poll_fn};
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// How long a loop keeps re-polling tasks that wait for protocol events before it sleeps: the
/// shared wait policy's spin (`exec::wait`, about 50 us).
const SPIN: Duration = Duration::from_micros(50);

/// Timers closer than this are waited for by polling without a timeout and yielding, as the
/// OS's timer slack would overshoot a sleep that short.
const TIMER_SLACK: Duration = Duration::from_micros(100);

/// The longest a loop sleeps without looking at its inbox and the stop flag, whatever its tasks
/// wait for.
const LONGEST_SLEEP: Duration = Duration::from_millis(20);

/// What a task waits for when it returns `Pending` (module docs).
#[derive(Default)]
pub(super) struct TaskWait {
    /// A descriptor and the `poll(2)` events that let it go on.
    io: Cell<Option<(RawFd, libc::c_short)>>,
    /// It goes on by this time at the latest.
    deadline: Cell<Option<Instant>>,
    /// It waits for a protocol event: re-polled every round.
    protocol: Cell<bool>,
}

impl TaskWait {
    fn clear(&self) {
        self.io.set(None);
        self.deadline.set(None);
        self.protocol.set(false);
    }

    /// Polls `fut` until it is ready (`Some`), the task waiting for protocol events meanwhile;
    /// `None` once `stopping` is set while it waits.
    pub(super) async fn protocol<F: Future>(
        &self,
        fut: F,
        stopping: &AtomicBool,
    ) -> Option<F::Output> {
        let mut fut = pin!(fut);
        poll_fn(|cx| match fut.as_mut().poll(cx) {
            Poll::Ready(out) => Poll::Ready(Some(out)),
            // Acquire: pairs with the accept loop's Release store of the stop flag.
            Poll::Pending if stopping.load(Ordering::Acquire) => Poll::Ready(None),
            Poll::Pending => {
                self.protocol.set(true);
                Poll::Pending
            }
        })
        .await
    }

    /// Waits until `deadline`.
    pub(super) async fn until(&self, deadline: Instant) {
        poll_fn(|_| {
            if Instant::now() >= deadline {
                Poll::Ready(())
            } else {
                self.deadline.set(Some(deadline));
                Poll::Pending
            }
        })
        .await
    }

    /// Reads what `stream` has into `buf` (0: the peer closed it), waiting for it to be
    /// readable; `ErrorKind::TimedOut` when nothing came by `deadline`.
    pub(super) async fn read(
        &self,
        mut stream: &TcpStream,
        buf: &mut [u8],
        deadline: Instant,
    ) -> std::io::Result<usize> {
        poll_fn(|_| {
            loop {
                match stream.read(buf) {
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        if Instant::now() >= deadline {
                            return Poll::Ready(Err(ErrorKind::TimedOut.into()));
                        }
                        self.io.set(Some((stream.as_raw_fd(), libc::POLLIN)));
                        self.deadline.set(Some(deadline));
                        return Poll::Pending;
                    }
                    done => return Poll::Ready(done),
                }
            }
        })
        .await
    }

    /// Writes all of `bytes` to `stream`, waiting for it to be writable when its buffer is
    /// full; `ErrorKind::TimedOut` when it stays full past `deadline`.
    pub(super) async fn write_all(
        &self,
        mut stream: &TcpStream,
        bytes: &[u8],
        deadline: Instant,
    ) -> std::io::Result<()> {
        let mut written = 0;
        poll_fn(|_| {
            while written < bytes.len() {
                match stream.write(&bytes[written..]) {
                    Ok(0) => return Poll::Ready(Err(ErrorKind::WriteZero.into())),
                    Ok(n) => written += n,
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        if Instant::now() >= deadline {
                            return Poll::Ready(Err(ErrorKind::TimedOut.into()));
                        }
                        self.io.set(Some((stream.as_raw_fd(), libc::POLLOUT)));
                        self.deadline.set(Some(deadline));
                        return Poll::Pending;
                    }
                    Err(e) => return Poll::Ready(Err(e)),
                }
            }
            Poll::Ready(Ok(()))
        })
        .await
    }
}

/// Where the accept loop hands a loop its new sessions.
pub(super) struct Inbox<T> {
    arrived: Mutex<Vec<T>>,
    /// Wakes the loop: for arrivals, the stop, and the parking lot's events.
    watcher: Arc<Watcher>,
}

impl<T> Inbox<T> {
    pub(super) fn new() -> std::io::Result<Self> {
        Ok(Inbox {
            arrived: Mutex::new(Vec::new()),
            watcher: Watcher::new()?,
        })
    }

    /// Hands the loop `item` and wakes it.
    pub(super) fn push(&self, item: T) {
        self.arrived
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(item);
        self.watcher.notify();
    }

    /// Wakes the loop (to see the stop flag).
    pub(super) fn wake(&self) {
        self.watcher.notify();
    }
}

/// One task of a loop.
struct Task<F> {
    fut: Pin<Box<F>>,
    wait: Rc<TaskWait>,
    /// Poll it this round (new, its descriptor ready, or the loop stopping).
    due: bool,
}

/// Runs tasks made by `start` from what `inbox` receives until `ending` is set and every task
/// has finished. `ending` is also the tasks' own signal to finish; the loop only makes sure each
/// is polled once it is set.
pub(super) fn run_loop<T, F: Future<Output = ()>>(
    inbox: &Inbox<T>,
    ending: &AtomicBool,
    mut start: impl FnMut(T, Rc<TaskWait>) -> F,
) {
    let lot = ParkingLot::global();
    lot.watch(&inbox.watcher);
    // Unregistered however the loop ends (a task's panic unwinds through here).
    let _unwatch = Unwatch(lot, &inbox.watcher);
    set_fine_timer_slack();
    let mut tasks: Vec<Task<F>> = Vec::new();
    let mut fds: Vec<libc::pollfd> = Vec::new();
    // Which task each entry of `fds` after the first (the watcher) is.
    let mut fd_task: Vec<usize> = Vec::new();
    let mut stopping_seen = false;
    // Since when the loop's protocol waiters have made no progress.
    let mut spinning_since: Option<Instant> = None;
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        let arrived = std::mem::take(&mut *inbox.arrived.lock().unwrap_or_else(|e| e.into_inner()));
        for item in arrived {
            let wait = Rc::new(TaskWait::default());
            tasks.push(Task {
                fut: Box::pin(start(item, Rc::clone(&wait))),
                wait,
                due: true,
            });
        }
        // Acquire: pairs with the accept loop's Release store.
        if !stopping_seen && ending.load(Ordering::Acquire) {
            stopping_seen = true;
            tasks.iter_mut().for_each(|t| t.due = true);
        }
        let progressed = poll_round(&mut tasks, &mut cx, Instant::now());
        if tasks.is_empty() && stopping_seen && inbox.arrived.lock().is_ok_and(|a| a.is_empty()) {
            return;
        }
        // What the loop sleeps for: sockets, the nearest deadline, protocol events.
        let now = Instant::now();
        let protocol_waits = tasks.iter().any(|t| t.wait.protocol.get());
        let nearest = tasks.iter().filter_map(|t| t.wait.deadline.get()).min();
        let mut timeout = nearest.map_or(LONGEST_SLEEP, |d| {
            d.saturating_duration_since(now).min(LONGEST_SLEEP)
        });
        if timeout <= TIMER_SLACK {
            timeout = Duration::ZERO;
        } else {
            timeout -= TIMER_SLACK;
        }
        let spin = if protocol_waits {
            if progressed {
                spinning_since = Some(now);
            }
            let since = *spinning_since.get_or_insert(now);
            now.duration_since(since) < SPIN
        } else {
            spinning_since = None;
            false
        };
        if spin || timeout.is_zero() {
            timeout = Duration::ZERO;
        } else if protocol_waits {
            timeout = timeout.min(PARK_TIMEOUT);
        }
        fds.clear();
        fd_task.clear();
        fds.push(libc::pollfd {
            fd: inbox.watcher.fd(),
            events: libc::POLLIN,
            revents: 0,
        });
        for (i, t) in tasks.iter().enumerate() {
            if let Some((fd, events)) = t.wait.io.get() {
                fds.push(libc::pollfd {
                    fd,
                    events,
                    revents: 0,
                });
                fd_task.push(i);
            }
        }
        if protocol_waits && !timeout.is_zero() {
            // Sleep until the lot's next waking event too; the last poll of the protocol
            // waiters runs after registering, so no event is lost between it and the sleep.
            let woke = lot.sleep_watching(
                &inbox.watcher,
                || poll_round(&mut tasks, &mut cx, Instant::now()).then_some(()),
                || {
                    ppoll(&mut fds, timeout);
                },
            );
            if woke.is_some() {
                // Tasks finished or moved on in the last poll: `fds` may name a finished
                // task, so look again before sleeping.
                continue;
            }
        } else if timeout.is_zero() {
            // Spinning (on a protocol wait or a near timer): look, and if nothing is ready,
            // yield, so that on a shared core the threads this loop waits for (a client, a
            // holder) run.
            if ppoll(&mut fds, Duration::ZERO) == 0 {
                std::thread::yield_now();
            }
        } else {
            ppoll(&mut fds, timeout);
        }
        if fds[0].revents != 0 {
            inbox.watcher.drain();
        }
        for (p, &i) in fds[1..].iter().zip(&fd_task) {
            if p.revents != 0 {
                tasks[i].due = true;
            }
        }
    }
}

/// Polls every task that is due, waits for protocol events, or whose deadline has passed;
/// removes the finished ones. Returns whether any task finished or moved on to another wait.
fn poll_round<F: Future<Output = ()>>(
    tasks: &mut Vec<Task<F>>,
    cx: &mut Context<'_>,
    now: Instant,
) -> bool {
    let mut progressed = false;
    let mut i = 0;
    while i < tasks.len() {
        let t = &mut tasks[i];
        let was_protocol = t.wait.protocol.get();
        let run = t.due || was_protocol || t.wait.deadline.get().is_some_and(|d| d <= now);
        if !run {
            i += 1;
            continue;
        }
        t.due = false;
        t.wait.clear();
        if t.fut.as_mut().poll(cx).is_ready() {
            tasks.swap_remove(i);
            progressed = true;
            continue;
        }
        if !(was_protocol && t.wait.protocol.get()) {
            progressed = true;
        }
        i += 1;
    }
    progressed
}

/// `ppoll(2)` on `fds` for at most `timeout` (zero: just look): how many are ready; an
/// interrupted or failed call counts as none ready, and the loop looks again.
fn ppoll(fds: &mut [libc::pollfd], timeout: Duration) -> usize {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `fds` is a valid, exclusively borrowed array of `fds.len()` pollfds; `ts` is a
    // valid timespec; no signal mask is passed.
    let ready = unsafe {
        libc::ppoll(
            fds.as_mut_ptr(),
            fds.len() as libc::nfds_t,
            &ts,
            std::ptr::null(),
        )
    };
    usize::try_from(ready).unwrap_or(0)
}

/// Asks the kernel to wake this thread's timed sleeps close to their deadline (the default
/// slack of 50 us would add to every `--rtt-us` delay); best effort.
fn set_fine_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and affects only this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

/// Unregisters a loop's watcher from the parking lot when dropped.
struct Unwatch<'a>(&'static ParkingLot, &'a Arc<Watcher>);

impl Drop for Unwatch<'_> {
    fn drop(&mut self) {
        self.0.unwatch(self.1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A loop runs tasks that wait for a deadline, a socket and a protocol event, on one
    /// thread, and ends once they finished and the stop is set.
    #[test]
    fn one_loop_runs_tasks_that_wait_for_sockets_timers_and_protocol_events() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let inbox: Inbox<u32> = Inbox::new().unwrap();
        let ending = AtomicBool::new(false);
        let released = AtomicBool::new(false);
        let done = std::sync::atomic::AtomicU32::new(0);
        std::thread::scope(|s| {
            let (inbox, ending, released, done, listener) =
                (&inbox, &ending, &released, &done, &listener);
            s.spawn(move || {
                run_loop(inbox, ending, |kind, wait: Rc<TaskWait>| async move {
                    match kind {
                        0 => wait.until(Instant::now() + Duration::from_millis(5)).await,
                        1 => {
                            let (stream, _) = listener.accept().unwrap();
                            stream.set_nonblocking(true).unwrap();
                            let mut buf = [0u8; 4];
                            let far = Instant::now() + Duration::from_secs(60);
                            let n = wait.read(&stream, &mut buf, far).await.unwrap();
                            assert_eq!(&buf[..n], b"ping");
                            wait.write_all(&stream, b"pong", far).await.unwrap();
                        }
                        _ => {
                            // Relaxed: the flag is the only shared state.
                            let released = poll_fn(|_| {
                                if released.load(Ordering::Relaxed) {
                                    Poll::Ready(())
                                } else {
                                    Poll::Pending
                                }
                            });
                            let never = AtomicBool::new(false);
                            assert!(wait.protocol(released, &never).await.is_some());
                        }
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                });
            });
            inbox.push(0);
            inbox.push(2);
            let mut client = std::net::TcpStream::connect(addr).unwrap();
            inbox.push(1);
            client.write_all(b"ping").unwrap();
            let mut reply = [0u8; 4];
            client.read_exact(&mut reply).unwrap();
            assert_eq!(&reply, b"pong");
            std::thread::sleep(Duration::from_millis(5));
            released.store(true, Ordering::Relaxed);
            ParkingLot::global().wake_parked();
            while done.load(Ordering::Relaxed) < 3 {
                std::thread::sleep(Duration::from_millis(1));
            }
            ending.store(true, Ordering::Release);
            inbox.wake();
        });
        assert_eq!(done.load(Ordering::Relaxed), 3);
    }
}
