variable "project_id" {
  description = "GCP project that hosts the functions, the topic and the billing dataset."
  type        = string
}

variable "region" {
  description = "Region of the functions and the bundle bucket."
  type        = string
  default     = "europe-west1"
}

variable "name_prefix" {
  description = "Prefix of every resource name, so several Furnish deployments can share a project."
  type        = string
  default     = "furnish"
  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,19}$", var.name_prefix))
    error_message = "name_prefix: lowercase letters, digits and '-', starting with a letter, at most 20 characters."
  }
}

variable "runtime" {
  description = "Cloud Functions runtime; matches the Node.js pinned in package.json."
  type        = string
  default     = "nodejs24"
  validation {
    condition     = can(regex("^nodejs(2[2-9]|[3-9][0-9])$", var.runtime))
    error_message = "runtime: nodejs22 or later (client-node 2, jose 6 and bigquery 9 need Node 22+)."
  }
}

variable "bundle_dir" {
  description = "Where `npm run build` wrote one folder per function."
  type        = string
  default     = "../dist"
}

variable "furnish_config" {
  description = "The Furnish configuration document (JSON), passed to every function as FURNISH_CONFIG. Secrets are not put here: name them with *_secret fields, resolved from Secret Manager."
  type        = string
  default     = "{}"
}

variable "cluster_secrets" {
  description = "Secret Manager secret ids per cluster id: the webhook token key and the reconciler's kubeconfig. Created empty; add versions out of band."
  type = map(object({
    webhook_key = string
    kubeconfig  = string
  }))
  default = {}
}

variable "webhook" {
  description = "Sizing of the admission functions, on the user's critical path: keep an instance warm."
  type = object({
    min_instances = number
    max_instances = number
    memory        = string
    timeout       = number
  })
  default = { min_instances = 1, max_instances = 20, memory = "256Mi", timeout = 10 }
}

variable "reconciler" {
  description = "Sizing of the Pub/Sub-triggered reconcilers."
  type = object({
    max_instances = number
    memory        = string
    timeout       = number
    concurrency   = number
  })
  default = { max_instances = 10, memory = "512Mi", timeout = 300, concurrency = 8 }
}

variable "billing" {
  description = "BigQuery dataset and table of the billing rows."
  type = object({
    dataset  = string
    table    = string
    location = string
  })
  default = { dataset = "furnish", table = "namespace_events", location = "EU" }
}
