cluster "x" {
  master "a" {
    address  = "127.0.0.1:7001"
    password = "hunter2"  # WARNING: Password written in the file
  }  
  master "b" { address = "127.0.0.1:7002" }  # WARNING: Fewer than 3 masters
  # WARNING@-1: Even number of masters
}
