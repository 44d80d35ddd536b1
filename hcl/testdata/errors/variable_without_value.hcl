variable "redis_password" {  # ERROR: has no value
  type      = string
  sensitive = true
}

cluster "x" {
  master "a" {
    address  = "127.0.0.1:7001"
    password = var.redis_password
  }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
}
