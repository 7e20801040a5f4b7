export { type EmbeddedDynamo, startDynamo, tableDefinitions } from '../../local/embedded-dynamo';
