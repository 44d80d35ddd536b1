# Five independent masters with an ACL user and TLS. The password comes from
# -var redis_password=... or REDLOCK_VAR_redis_password and is never printed.

variable "redis_password" {
  type        = string
  sensitive   = true
  description = "Password of the locker ACL user on every master"
}

cluster "payments" {
  key_prefix         = "lock:payments:"
  ttl                = "30s"
  max_ttl            = "5m"
  node_timeout       = "50ms"
  restart_quarantine = true

  drift {
    factor = 0.01
    extra  = "2ms"
  }

  retry {
    attempts = 32
    delay    = "150ms"
    jitter   = "100ms"
  }

  settings {
    maxmemory_policy = "noeviction"
    appendonly       = "yes"
    appendfsync      = "always"
  }

  master "a" {
    address  = "10.0.0.11:6379"
    username = "locker"
    password = var.redis_password
    tls {
      ca_file     = "certs/ca.pem"
      server_name = "redis-a.internal"
    }
  }
  master "b" {
    address  = "10.0.0.12:6379"
    username = "locker"
    password = var.redis_password
    tls {
      ca_file     = "certs/ca.pem"
      server_name = "redis-b.internal"
    }
  }
  master "c" {
    address  = "10.0.0.13:6379"
    username = "locker"
    password = var.redis_password
    tls {
      ca_file     = "certs/ca.pem"
      server_name = "redis-c.internal"
    }
  }
  master "d" {
    address  = "10.0.0.14:6379"
    username = "locker"
    password = var.redis_password
    tls {
      ca_file     = "certs/ca.pem"
      server_name = "redis-d.internal"
    }
  }
  master "e" {
    address  = "10.0.0.15:6379"
    username = "locker"
    password = var.redis_password
    tls {
      ca_file     = "certs/ca.pem"
      server_name = "redis-e.internal"
    }
  }

  # Billing jobs hold short locks, queue fairly and fence their writes.
  lock "billing/*" {
    ttl            = "10s"
    max_extensions = 20
    fair           = true
    fencing        = true
  }

  # Nightly reports may run long, extended by the keep-alive up to max_ttl each time.
  lock "reports/*" {
    ttl            = "2m"
    max_extensions = 30
  }
}
