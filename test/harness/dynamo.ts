export { startDynamo, tableDefinitions, type EmbeddedDynamo } from '../../local/embedded-dynamo';
