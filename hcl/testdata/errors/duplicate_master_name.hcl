cluster "x" {
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "127.0.0.1:7002" }
  master "a" { address = "127.0.0.1:7003" }  # ERROR: Duplicate master name
}
