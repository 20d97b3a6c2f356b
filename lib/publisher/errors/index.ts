export * from './invalid-topic.error';
export * from './publish-rejected.error';
