cluster "x" {
  ttl = "0s"  # ERROR: ttl must be positive
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
}
