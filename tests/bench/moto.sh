# Sourced by the S3 benchmarks: moto's S3 server over TLS on loopback. Expects $work (a scratch
# folder) and a pids array; needs openssl and moto (installed by .ci/setup).
#
#   start_moto     a throw-away CA ($work/ca.pem) and a certificate for 127.0.0.1 signed by
#                  it; moto started with it on a free port; sets $endpoint (https://127.0.0.1:P)

start_moto() {
  local moto=${KLUIS_MOTO_VENV:-$HOME/.cache/kluis/moto}/bin/moto_server port
  [ -x "$moto" ] || { echo "moto_server is missing: run bash .ci/setup" >&2; exit 1; }
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=bench-ca \
    -keyout "$work/ca.key" -out "$work/ca.pem" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
    -keyout "$work/key.pem" -out "$work/req.pem" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' >"$work/ext"
  openssl x509 -req -in "$work/req.pem" -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial \
    -days 1 -extfile "$work/ext" -out "$work/cert.pem" 2>/dev/null
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$moto" -H 127.0.0.1 -p "$port" -c "$work/cert.pem" -k "$work/key.pem" >"$work/moto.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do grep -q "Running on" "$work/moto.log" && break; sleep 0.1; done
  grep -q "Running on" "$work/moto.log" || { echo "moto did not start" >&2; cat "$work/moto.log" >&2; exit 1; }
  endpoint=https://127.0.0.1:$port
}
