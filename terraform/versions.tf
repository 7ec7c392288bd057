terraform {
  # 1.9: a variable's validation may read another variable (reconciler.timeout against reconciler_env).
  required_version = ">= 1.9"
  required_providers {
    google  = { source = "hashicorp/google", version = ">= 6.0, < 8.0" }
    archive = { source = "hashicorp/archive", version = ">= 2.4" }
    random  = { source = "hashicorp/random", version = ">= 3.6" }
  }
}
