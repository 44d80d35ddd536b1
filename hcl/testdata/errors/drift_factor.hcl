cluster "x" {
  drift {
    factor = 0.5  # ERROR: Drift factor out of range
  }
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
}
