cluster "x" {
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "redis-b.internal" }  # ERROR: is not host:port
  master "c" { address = "127.0.0.1:99999" }   # ERROR: invalid port
}
