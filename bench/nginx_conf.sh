# bench/nginx_conf.sh: the nginx both bench/run.sh and bench/profile.sh
# measure. Source it; then: write_nginx_conf DIR PORT
# One worker answering `return 200`, no access log, keep-alive connections
# that last the run (or KEEPALIVE_REQUESTS requests each), everything under DIR.
# NGINX_MASTER=off runs it without a master (for valgrind). As root the worker stays root so
# master and worker can both write a log file, whoever opens it.
write_nginx_conf() {
	local d=$1 port=$2 user= master=
	[ "${NGINX_MASTER:-on}" = off ] && master="master_process off;"
	mkdir -p "$d/tmp"
	[ "$(id -u)" = 0 ] && user="user root;"
	cat >"$d/nginx.conf" <<-EOF
	$user
	$master
	worker_processes 1;
	daemon off;
	pid $d/nginx.pid;
	error_log $d/error.log warn;
	events { worker_connections 4096; }
	http {
	    access_log off;
	    keepalive_requests ${KEEPALIVE_REQUESTS:-1000000};
	    client_body_temp_path $d/tmp/body;
	    proxy_temp_path $d/tmp/proxy;
	    fastcgi_temp_path $d/tmp/fastcgi;
	    uwsgi_temp_path $d/tmp/uwsgi;
	    scgi_temp_path $d/tmp/scgi;
	    server {
	        listen 127.0.0.1:$port;
	        location / { return 200 "ok\n"; }
	    }
	}
	EOF
}
