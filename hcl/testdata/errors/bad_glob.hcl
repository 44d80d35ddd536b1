cluster "x" {
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
  lock "billing/[0-9" {  # ERROR: Invalid lock pattern
    ttl = "10s"
  }
}
