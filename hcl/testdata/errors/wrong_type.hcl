cluster "x" {
  restart_quarantine = "maybe"  # ERROR: must be true or false
  retry {
    attempts = 2.5  # ERROR: must be a whole number
  }
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
}
