cluster "x" {
  ttl     = "30"          # ERROR: needs a unit, e.g. "30s"
  max_ttl = "5 minutes"   # ERROR: is not a duration
  retry {
    delay = 150           # ERROR: needs a unit
  }
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
}
