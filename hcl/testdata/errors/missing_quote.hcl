cluster "x" {
  master "a" { address = "127.0.0.1:7001" }
  master "b" {
    address = "127.0.0.1:7002  # ERROR: Unterminated template string
  }  # ERROR@-1: Invalid multi-line string
  master "c" { address = "127.0.0.1:7003" }
}
