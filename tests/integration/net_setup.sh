# The private test network of tests/integration/network_test.cpp and bench/network.sh.
# Runs as the namespace holder:
#   setsid unshare --user --map-current-user --keep-caps --net --mount --propagation private \
#     bash net_setup.sh DIR SERVER-COMMAND...
# A veth pair joins this namespace (203.0.113.1) to a second network namespace
# (203.0.113.2) where SERVER-COMMAND runs; it must create DIR/servers.ready once it listens.
# /etc/hosts is replaced by DIR/hosts in this mount namespace only. Where the kernel has IPv6,
# this side also gets 2001:db8::1/64 and a path to 2001:db8::dead that loses every packet (a
# neighbour entry with a link-layer address no interface has: SYNs leave and are never
# answered), and DIR/ipv6.ready is touched. Touches DIR/ready when the servers listen, then
# waits until it is killed (with its process group).
set -eu
dir=$1
shift
ip link set lo up
unshare --net sleep infinity &
server=$!
while [ "$(readlink /proc/$server/ns/net)" = "$(readlink /proc/self/ns/net)" ]; do sleep 0.01; done
ip link add pisb0 type veth peer name pisb1
ip link set pisb1 netns "$server"
ip addr add 203.0.113.1/24 dev pisb0
ip link set pisb0 up
if ip -6 addr add 2001:db8::1/64 dev pisb0 nodad 2>/dev/null &&
  ip -6 neigh replace 2001:db8::dead lladdr 02:00:00:00:de:ad dev pisb0 nud permanent; then
  touch "$dir/ipv6.ready"
fi
nsenter -n -t "$server" sh -c \
  'ip link set lo up && ip addr add 203.0.113.2/24 dev pisb1 && ip link set pisb1 up'
mount --bind "$dir/hosts" /etc/hosts
nsenter -n -t "$server" "$@" &
while [ ! -e "$dir/servers.ready" ]; do sleep 0.02; done
touch "$dir/ready"
wait
