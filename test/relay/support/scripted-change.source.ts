// Moved to lib/testing (lib specs must not import from test/); kept here for existing imports.
export * from '../../../lib/testing/relay/scripted-change.source';
