ALTER TABLE `webhook_endpoints` ADD `failing_since` integer;--> statement-breakpoint
CREATE INDEX `deliveries_endpoint_idx` ON `webhook_deliveries` (`endpoint_id`,`status`,`event_id`);