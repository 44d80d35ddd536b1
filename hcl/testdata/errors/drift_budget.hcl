cluster "x" {
  ttl = "1s"
  drift {
    factor = 0.4
    extra  = "700ms"  # ERROR: Drift budget not below ttl
  }
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
}
