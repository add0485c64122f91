use super::*;

fn plant(dir: &Path, text: &str, age: Duration) {
    let p = lock_path(dir);
    std::fs::write(&p, text).unwrap();
    std::fs::File::options().append(true).open(&p).unwrap().set_modified(SystemTime::now() - age).unwrap();
}

fn run_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wt-lock-{name}-{}", std::process::id()));
    let _ = std::fs::remove_file(lock_path(&d));
    d
}

#[test]
fn a_live_foreign_holder_is_refused_by_name() {
    let d = run_dir("foreign");
    plant(&d, "node-17 4242", Duration::from_secs(10));
    let e = RunLock::acquire(&d).err().expect("must refuse").to_string();
    assert!(e.contains("node-17") && e.contains("4242"), "{e}");
    assert_eq!(std::fs::read_to_string(lock_path(&d)).unwrap(), "node-17 4242", "the holder's lock is kept");
    std::fs::remove_file(lock_path(&d)).unwrap();
}

#[test]
fn a_foreign_holder_without_heartbeat_is_taken_over() {
    let d = run_dir("stale");
    plant(&d, "node-17 4242", STALE + Duration::from_secs(5));
    let lock = RunLock::acquire(&d).expect("stale lock taken over");
    let h = holder(&d).unwrap();
    assert_eq!((h.host, h.pid), (host_name(), std::process::id()));
    assert_eq!(h.start, process_start(std::process::id()));
    drop(lock);
    assert!(!lock_path(&d).exists());
}

#[test]
fn a_dead_local_pid_is_taken_over_and_a_live_one_refused() {
    let d = run_dir("local");
    // pid_max is at most 2^22, so this pid cannot exist.
    plant(&d, &format!("{} 99999999", host_name()), Duration::ZERO);
    drop(RunLock::acquire(&d).expect("dead holder"));
    plant(&d, &std::process::id().to_string(), Duration::from_secs(60));
    assert!(RunLock::acquire(&d).is_err(), "a bare live pid of this host with a heartbeat is a holder");
    std::fs::remove_file(lock_path(&d)).unwrap();
}

#[test]
fn a_reused_pid_is_told_apart_by_its_start_time() {
    let d = run_dir("reused");
    let me = std::process::id();
    let start = process_start(me).expect("this process has a start time");
    // Our pid, but a start time that is not ours: the process that wrote it is gone.
    plant(&d, &format!("{} {me} start={} token=t", host_name(), start + 1), Duration::ZERO);
    drop(RunLock::acquire(&d).expect("a reused pid is no holder"));
    // Our pid and start time: a holder, however old its heartbeat (a stopped process keeps it).
    plant(&d, &format!("{} {me} start={start} token=t", host_name()), Duration::from_secs(3600));
    assert!(RunLock::acquire(&d).is_err(), "the same process is a holder");
    // An old-format lock naming a live pid whose heartbeat lapsed hours ago is taken over.
    plant(&d, &format!("{} {me}", host_name()), STALE + Duration::from_secs(3600));
    drop(RunLock::acquire(&d).expect("no heartbeat for hours"));
}

#[test]
fn a_young_unreadable_lock_is_held_and_an_old_one_taken_over() {
    let d = run_dir("unreadable");
    plant(&d, "", Duration::ZERO);
    let e = RunLock::acquire(&d).err().expect("a lock being written is held").to_string();
    assert!(e.contains("names no holder"), "{e}");
    assert_eq!(std::fs::read_to_string(lock_path(&d)).unwrap(), "", "kept as it was");
    plant(&d, "garbage", STALE + Duration::from_secs(1));
    drop(RunLock::acquire(&d).expect("an old unreadable lock is taken over"));
    assert!(!lock_path(&d).exists());
}

#[test]
fn dropping_a_lock_that_was_taken_over_leaves_the_new_holders_lock() {
    let d = run_dir("drop");
    let lock = RunLock::acquire(&d).unwrap();
    // Another holder replaced it (e.g. after judging ours stale): it is not ours to remove.
    plant(&d, "node-9 77 token=other", Duration::ZERO);
    drop(lock);
    assert_eq!(std::fs::read_to_string(lock_path(&d)).unwrap(), "node-9 77 token=other");
    std::fs::remove_file(lock_path(&d)).unwrap();
}

#[test]
fn a_symlinked_alias_of_a_run_shares_its_lock() {
    let d = run_dir("real");
    std::fs::create_dir_all(&d).unwrap();
    let alias = d.with_file_name(format!("wt-lock-alias-{}", std::process::id()));
    let _ = std::fs::remove_file(&alias);
    std::os::unix::fs::symlink(&d, &alias).unwrap();
    assert_eq!(lock_path(&alias), lock_path(&d));
    let held = RunLock::acquire(&d).unwrap();
    assert!(RunLock::acquire(&alias).is_err(), "the alias is the same run");
    drop(held);
    std::fs::remove_file(&alias).unwrap();
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn threads_racing_for_one_lock_leave_exactly_one_holder() {
    for round in 0..20 {
        let d = run_dir(&format!("race{round}"));
        let barrier = std::sync::Barrier::new(8);
        let won: Vec<Option<RunLock>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        barrier.wait();
                        RunLock::acquire(&d).ok()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let holders: Vec<&RunLock> = won.iter().flatten().collect();
        assert_eq!(holders.len(), 1, "round {round}: one holder");
        assert!(is_ours(&holders[0].path, &holders[0].text));
        drop(won);
        assert!(!lock_path(&d).exists());
    }
}

#[test]
fn a_silent_foreign_holder_is_waited_for_and_a_beating_one_refused() {
    let d = run_dir("silent");
    let stale = Duration::from_secs(3);
    // Missed two heartbeats (0.6 s) but not yet stale: waited for until 3 s have passed.
    plant(&d, "node-17 4242", Duration::from_millis(1500));
    let t0 = Instant::now();
    wait_for_silent_foreign_holder(&d, &lock_path(&d), stale).expect("a silent holder lapses");
    assert!(t0.elapsed() >= Duration::from_millis(1000), "returned before the lock was stale");
    // Its heartbeat moves during the wait: the holder lives, refused by name (a 10 s limit, so
    // a slow machine still refreshes it long before it would lapse).
    let stale = Duration::from_secs(10);
    plant(&d, "node-17 4242", Duration::from_millis(2500));
    let p = lock_path(&d);
    let beat = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        std::fs::File::options().append(true).open(&p).unwrap().set_modified(SystemTime::now()).unwrap();
    });
    let e = wait_for_silent_foreign_holder(&d, &lock_path(&d), stale).expect_err("a live holder").to_string();
    beat.join().unwrap();
    assert!(e.contains("node-17") && e.contains("4242"), "{e}");
    std::fs::remove_file(lock_path(&d)).unwrap();
}

#[test]
fn only_a_foreign_holder_between_two_missed_heartbeats_and_stale_is_waited_for() {
    let stale = Duration::from_secs(300);
    let h = |host: &str, age: u64| Holder { host: host.into(), pid: 1, age: Duration::from_secs(age), start: None };
    assert!(!silent_foreign(&h("node-17", 59), stale), "fresh heartbeat: refused at once");
    assert!(silent_foreign(&h("node-17", 60), stale));
    assert!(silent_foreign(&h("node-17", 299), stale));
    assert!(!silent_foreign(&h("node-17", 300), stale), "stale: taken over at once");
    assert!(!silent_foreign(&h(&host_name(), 120), stale), "this host's holders are judged by pid");
}
