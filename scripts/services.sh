#!/usr/bin/env bash
# (Re)start the local servers the integration tests use, with the commands this machine's
# documentation gives, and wait until each answers.
set -uo pipefail

pg_up()     { pg_isready -h 127.0.0.1 -p 5432 -q; }
redis_up()  { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }
rabbit_up() { (exec 3<>/dev/tcp/127.0.0.1/5672) 2>/dev/null; }

if ! pg_up; then
  echo "starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start || true
fi
if ! redis_up; then
  echo "starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
fi
if ! rabbit_up; then
  echo "starting RabbitMQ"
  rabbitmq-server -detached || true
fi
for i in $(seq 1 60); do
  pg_up && redis_up && rabbit_up && { echo "services up: postgresql redis rabbitmq"; exit 0; }
  sleep 1
done
echo "services not all up after 60 s:"; pg_up || echo " postgresql down"; redis_up || echo " redis down"; rabbit_up || echo " rabbitmq down"
exit 1
