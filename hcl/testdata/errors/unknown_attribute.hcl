cluster "x" {
  node_timout = "10ms"  # ERROR: Did you mean "node_timeout"?
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
}
