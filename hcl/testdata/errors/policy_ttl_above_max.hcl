cluster "x" {
  max_ttl = "1m"
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
  lock "reports/*" {
    ttl = "2m"  # ERROR: Lock ttl above max_ttl
  }
}
