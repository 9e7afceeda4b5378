#!/usr/bin/env bash
# The network benchmark's private network (bench/network.sh), the same shape as
# tests/integration/network_test.cpp. Runs as the namespace holder:
#   setsid unshare --user --map-current-user --keep-caps --net --mount --propagation private \
#     bash net_setup.sh DIR
# DIR holds hosts and net_servers.py. A veth pair joins this namespace (203.0.113.1) to a
# second network namespace (203.0.113.2) where the server listens; /etc/hosts is replaced by
# DIR/hosts in this mount namespace only. Touches DIR/ready when the server listens, then
# waits until it is killed.
set -eu
dir=$1
ip link set lo up
unshare --net sleep infinity &
server=$!
while [ "$(readlink /proc/$server/ns/net)" = "$(readlink /proc/self/ns/net)" ]; do sleep 0.01; done
ip link add pisb0 type veth peer name pisb1
ip link set pisb1 netns "$server"
ip addr add 203.0.113.1/24 dev pisb0
ip link set pisb0 up
nsenter -n -t "$server" sh -c \
  'ip link set lo up && ip addr add 203.0.113.2/24 dev pisb1 && ip link set pisb1 up'
mount --bind "$dir/hosts" /etc/hosts
nsenter -n -t "$server" /usr/bin/python3 "$dir/net_servers.py" 203.0.113.2 80 "$dir/server.ready" &
while [ ! -e "$dir/server.ready" ]; do sleep 0.02; done
touch "$dir/ready"
wait
