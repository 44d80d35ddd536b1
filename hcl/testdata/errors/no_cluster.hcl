variable "unused" {  # ERROR: Missing cluster block
  default = "x"
}
