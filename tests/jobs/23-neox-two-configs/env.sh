# Where GPT-NeoX is checked out; the configs are next to this job.
NEOX_DIR=${NEOX_DIR:-.}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-ib0}
