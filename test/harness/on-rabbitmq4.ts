// The `integration-rabbitmq4` project's setup file (jest.config.js): runs before each of its test
// files, so test/harness/services.ts points `services` at the RabbitMQ 4.0 node for that file only.
process.env.TEST_ON_RABBITMQ4 = '1';
