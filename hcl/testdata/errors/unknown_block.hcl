cluster "x" {
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
  replica "d" {  # ERROR: Unsupported block type
    address = "127.0.0.1:7004"
  }
}
