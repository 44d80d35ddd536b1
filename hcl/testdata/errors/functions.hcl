cluster "x" {
  key_prefix = upper("lock:")  # ERROR: Function calls not allowed
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
}
