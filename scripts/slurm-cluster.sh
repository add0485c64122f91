#!/usr/bin/env bash
# A three-host Slurm cluster on this one machine, for the Slurm executor's tests (.ci/run):
# slurmctld on host wt-ctl and slurmd on hosts wt-a and wt-b. Each host is a set of Linux
# namespaces: its own network (`ip netns`, a veth on the private bridge wtbr0, 10.77.0.0/24),
# its own hostname (UTS), its own mounts and its own processes (PID), so killing a host's
# first process kills everything on it, as a node that loses power. All hosts share this
# machine's filesystem, as cluster nodes share a network filesystem; each binds its own Slurm
# spool and log directories (/var/lib/windtunnel-cluster/<host>) and hosts file.
#
#   scripts/slurm-cluster.sh start          install slurm-wlm and munge from Debian when missing,
#                                           write slurm.conf, start munged and the three hosts
#   scripts/slurm-cluster.sh stop           stop the hosts and munged, remove the network
#   scripts/slurm-cluster.sh status         sinfo per node
#   scripts/slurm-cluster.sh kill HOST      SIGKILL every process of HOST (slurmd, its job steps)
#   scripts/slurm-cluster.sh revive HOST    start HOST again (Slurm returns it to service)
#   scripts/slurm-cluster.sh hide HOST DIR  DIR becomes an empty directory on HOST only
#   scripts/slurm-cluster.sh unhide HOST DIR
#   scripts/slurm-cluster.sh pid HOST       HOST's first process (for nsenter)
#
# Runs as root (as CI does here). It refuses to touch a slurm.conf it did not write.
set -euo pipefail
CONF=/etc/slurm/slurm.conf
MARK="# written by windtunnel scripts/slurm-cluster.sh"
STATE=/var/lib/windtunnel-cluster
BRIDGE=wtbr0
NET=10.77.0
HOSTS=(wt-ctl wt-a wt-b)
declare -A ADDR=([wt-ctl]=10 [wt-a]=11 [wt-b]=12)
SELF="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"

install() {
    if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null \
        && command -v sbatch >/dev/null && command -v nsenter >/dev/null && command -v ip >/dev/null; then
        return
    fi
    echo "installing slurm-wlm, munge and iproute2 from Debian's packages"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge iproute2 util-linux >/dev/null
}

write_conf() {
    # The one-node script this one replaced wrote the same file with its own mark.
    if [ -f "$CONF" ] && ! grep -qE "^# written by windtunnel scripts/slurm-(cluster|local)\.sh" "$CONF"; then
        echo "error: $CONF exists and was not written by this script; not touching a real cluster's config" >&2
        exit 1
    fi
    # Each slurmd host gets one of the machine's CPUs and 40 % of its memory, so two one-CPU
    # tasks land on two hosts.
    local mem
    mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 4 / 10 ))
    mkdir -p /etc/slurm
    cat >"$CONF.tmp" <<CONF
$MARK
ClusterName=windtunnel
SlurmctldHost=wt-ctl($NET.${ADDR[wt-ctl]})
AuthType=auth/munge
SlurmUser=root
SlurmdUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
DefMemPerCPU=1024
# A host that stops answering is down after 10 s; its batch jobs are requeued; it returns to
# service when its slurmd registers again.
SlurmdTimeout=10
JobRequeue=1
ReturnToService=2
KillWait=5
MinJobAge=300
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/var/spool/slurmctld/slurmctld.pid
SlurmdPidFile=/var/spool/slurmd/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
NodeName=wt-a NodeAddr=$NET.${ADDR[wt-a]} CPUs=1 RealMemory=$mem State=UNKNOWN
NodeName=wt-b NodeAddr=$NET.${ADDR[wt-b]} CPUs=1 RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=wt-a,wt-b Default=YES MaxTime=INFINITE State=UP
CONF
    mv "$CONF.tmp" "$CONF"
}

start_munge() {
    if [ ! -s /etc/munge/munge.key ]; then
        mkdir -p /etc/munge
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
        chown munge:munge /etc/munge/munge.key 2>/dev/null || true
        chmod 400 /etc/munge/munge.key
    fi
    mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null || true
    if ! { pgrep -x munged >/dev/null && [ -S /run/munge/munge.socket.2 ]; }; then
        runuser -u munge -- /usr/sbin/munged || /usr/sbin/munged --force
    fi
}

# The bridge (this machine is $NET.1 on it, the submit host) and one veth per host.
net_up() {
    ip link show "$BRIDGE" >/dev/null 2>&1 || ip link add "$BRIDGE" type bridge
    ip addr replace "$NET.1/24" dev "$BRIDGE"
    ip link set "$BRIDGE" up
    local h
    for h in "${HOSTS[@]}"; do
        ip netns list | grep -qw "^$h" && continue
        ip netns add "$h"
        ip link add "v$h" type veth peer name "v$h-ns"
        ip link set "v$h-ns" netns "$h"
        ip link set "v$h" master "$BRIDGE" up
        ip netns exec "$h" ip addr add "$NET.${ADDR[$h]}/24" dev "v$h-ns"
        ip netns exec "$h" ip link set "v$h-ns" up
        ip netns exec "$h" ip link set lo up
    done
    {
        echo "127.0.0.1 localhost"
        echo "$NET.1 $(hostname)"
        for h in "${HOSTS[@]}"; do echo "$NET.${ADDR[$h]} $h"; done
    } >"$STATE/hosts"
}

net_down() {
    local h
    for h in "${HOSTS[@]}"; do
        ip netns del "$h" 2>/dev/null || true
        ip link del "v$h" 2>/dev/null || true
    done
    ip link del "$BRIDGE" 2>/dev/null || true
}

# Inside a host's namespaces (called by host_up): its name, its own spool, log and hosts
# file, then its daemon in the foreground under a shell that stays the host's first process.
host_main() {
    local h=$1
    hostname "$h"
    mkdir -p "$STATE/$h/spool" "$STATE/$h/log" /var/spool/slurmd /var/spool/slurmctld /var/log/slurm
    mount --bind "$STATE/$h/log" /var/log/slurm
    mount --bind "$STATE/hosts" /etc/hosts
    if [ "$h" = wt-ctl ]; then
        mount --bind "$STATE/$h/spool" /var/spool/slurmctld
        /usr/sbin/slurmctld -D -c &
    else
        mount --bind "$STATE/$h/spool" /var/spool/slurmd
        /usr/sbin/slurmd -D -N "$h" &
    fi
    wait
}

host_pid() {
    local f="$STATE/$1/init.pid"
    [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && cat "$f"
}

host_up() {
    local h=$1
    if host_pid "$h" >/dev/null; then return; fi
    mkdir -p "$STATE/$h"
    # nsenter, not `ip netns exec`: that remounts /sys without the cgroup mounts slurmd needs.
    setsid nsenter --net="/run/netns/$h" unshare --uts --mount --pid --fork --mount-proc --propagation private \
        "$SELF" _host "$h" >"$STATE/$h/console.log" 2>&1 </dev/null &
    local outer=$! inner=
    for _ in $(seq 1 50); do
        inner=$(pgrep -P "$outer" | head -n1) && [ -n "$inner" ] && break
        sleep 0.1
    done
    [ -n "$inner" ] || { echo "error: host $h did not start; see $STATE/$h/console.log" >&2; exit 1; }
    echo "$inner" >"$STATE/$h/init.pid"
}

host_kill() {
    local pid
    pid=$(host_pid "$1") || { echo "host $1 is not running" >&2; return 0; }
    # PID 1 of the host's namespace: the kernel kills every process in it with it.
    kill -KILL "$pid"
    rm -f "$STATE/$1/init.pid"
}

wait_for_nodes() {
    local want=$1
    for _ in $(seq 1 90); do
        if [ "$(timeout 5 sinfo -h -N -o '%N %T' 2>/dev/null | grep -cE ' (idle|mixed|allocated)$')" -ge "$want" ]; then
            sinfo -N
            return
        fi
        sleep 1
    done
    echo "error: the cluster did not come up; logs in $STATE/<host>/log" >&2
    tail -n 20 "$STATE"/*/log/*.log >&2 || true
    exit 1
}

start() {
    [ "$(id -u)" = 0 ] || { echo "error: run as root (it makes network namespaces)" >&2; exit 1; }
    install
    mkdir -p "$STATE"
    write_conf
    start_munge
    net_up
    local h
    for h in "${HOSTS[@]}"; do host_up "$h"; done
    wait_for_nodes 2
}

stop() {
    local h
    for h in "${HOSTS[@]}"; do host_kill "$h"; done
    pkill -x munged || true
    # Until they are gone: a start right after must not find a dying munged or slurmd.
    for _ in $(seq 1 40); do
        pgrep -x munged >/dev/null || pgrep -x slurmd >/dev/null || pgrep -x slurmctld >/dev/null || break
        sleep 0.25
    done
    net_down
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) sinfo -N ;;
    kill) host_kill "${2:?host}" ;;
    revive) host_up "${2:?host}"; wait_for_nodes 2 ;;
    hide) nsenter -t "$(host_pid "${2:?host}")" -m mount -t tmpfs -o size=1m,mode=0755 wt-hidden "${3:?directory}" ;;
    unhide) nsenter -t "$(host_pid "${2:?host}")" -m umount "${3:?directory}" ;;
    pid) host_pid "${2:?host}" ;;
    _host) host_main "${2:?host}" ;;
    *) echo "usage: $0 start|stop|status|kill HOST|revive HOST|hide HOST DIR|unhide HOST DIR|pid HOST" >&2; exit 2 ;;
esac
