#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for the Slurm executor's tests (.ci/run):
#   scripts/slurm-local.sh start   install slurm-wlm and munge from Debian when missing, write a
#                                  minimal slurm.conf, start munged, slurmctld and slurmd
#   scripts/slurm-local.sh stop    stop the three daemons
#   scripts/slurm-local.sh status  sinfo
# Runs as root (as CI does here). It refuses to touch a slurm.conf it did not write.
set -euo pipefail
CONF=/etc/slurm/slurm.conf
MARK="# written by windtunnel scripts/slurm-local.sh"

install() {
    if command -v slurmctld >/dev/null && command -v munged >/dev/null && command -v sbatch >/dev/null; then
        return
    fi
    echo "installing slurm-wlm and munge from Debian's packages"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
}

write_conf() {
    if [ -f "$CONF" ] && ! grep -qF "$MARK" "$CONF"; then
        echo "error: $CONF exists and was not written by this script; not touching a real cluster's config" >&2
        exit 1
    fi
    local host cpus mem
    host=$(hostname -s)
    cpus=$(nproc)
    mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 8 / 10 ))
    mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
    cat >"$CONF" <<CONF
$MARK
ClusterName=windtunnel
SlurmctldHost=$host
AuthType=auth/munge
SlurmUser=root
SlurmdUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
DefMemPerCPU=1024
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
}

start() {
    install
    write_conf
    if [ ! -s /etc/munge/munge.key ]; then
        mkdir -p /etc/munge
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
        chown munge:munge /etc/munge/munge.key 2>/dev/null || true
        chmod 400 /etc/munge/munge.key
    fi
    mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null || true
    pgrep -x munged >/dev/null || runuser -u munge -- /usr/sbin/munged || /usr/sbin/munged --force
    pgrep -x slurmctld >/dev/null || /usr/sbin/slurmctld
    pgrep -x slurmd >/dev/null || /usr/sbin/slurmd
    for _ in $(seq 1 60); do
        if sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
            sinfo
            return
        fi
        sleep 1
    done
    echo "error: the one-node Slurm did not come up; logs in /var/log/slurm" >&2
    tail -n 20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
    exit 1
}

stop() {
    pkill -x slurmd || true
    pkill -x slurmctld || true
    pkill -x munged || true
    for _ in $(seq 1 20); do
        pgrep -x slurmd >/dev/null || pgrep -x slurmctld >/dev/null || pgrep -x munged >/dev/null || return 0
        sleep 0.5
    done
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) sinfo ;;
    *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
