cluster "x" {
  ttl     = "10m"  # ERROR: ttl above max_ttl
  max_ttl = "5m"
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
}
