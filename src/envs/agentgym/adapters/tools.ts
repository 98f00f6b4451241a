/**
 * AgentGym's tool environments — weather, movie, todo, sheet, academia (`agentenv-tool`): id key
 * `env_idx`; `/create {id: 0}` → bare int; `/reset {env_idx, id: <item>}` → bare string (the
 * first observation); `/step {env_idx, action: <full text>}` → `{observation, reward, done}`
 * (reward = progress, 1 when the task is solved). No `/close`: instances are pooled and reused.
 * The server parses `Action: <name> with Action Input: <json>` itself.
 */
import { rawAction } from './parsers.js';
import { bareInt, bareString, booleanAt, numberAt, objectOf, stringAt } from './shapes.js';
import type { AgentGymAdapter, AgentGymType } from './types.js';

// The functions each server offers (their signatures are the protocol; see AgentGym's prompts).
const FUNCTIONS: Readonly<Record<'weather' | 'movie' | 'todo' | 'sheet' | 'academia', readonly string[]>> = {
  weather: [
    'get_user_current_date()', 'get_user_current_location()', 'get_latitude_longitude(name)', 'get_elevation(latitude, longitude)',
    'get_distance(latitude1, longitude1, latitude2, longitude2)',
    'get_historical_temp(latitude, longitude, start_date, end_date)', 'get_historical_rain(latitude, longitude, start_date, end_date)',
    'get_historical_snow(latitude, longitude, start_date, end_date)', 'get_historical_air_quality_index(latitude, longitude, start_date, end_date)',
    'get_temp_forecast(latitude, longitude, start_date, end_date)', 'get_rain_forecast(latitude, longitude, start_date, end_date)',
    'get_snow_forecast(latitude, longitude, start_date, end_date)',
    'get_current_temp(latitude, longitude, current_date)', 'get_current_rain(latitude, longitude, current_date)',
    'get_current_snow(latitude, longitude, current_date)', 'get_current_air_quality_index(latitude, longitude, current_date)',
    'get_air_quality_level(air_quality_index)', 'check_valid_actions()', 'finish(answer)',
  ],
  movie: [
    'get_search_movie(movie_name)', 'get_movie_details(movie_id)', 'get_movie_production_companies(movie_id)',
    'get_movie_production_countries(movie_id)', 'get_movie_cast(movie_id)', 'get_movie_crew(movie_id)', 'get_movie_keywords(movie_id)',
    'get_movie_alternative_titles(movie_id)', 'get_movie_translation(movie_id)', 'get_search_person(person_name)',
    'get_person_details(person_id)', 'get_person_cast(person_id)', 'get_person_crew(person_id)', 'get_person_external_ids(person_id)',
    'check_valid_actions()', 'finish(answer)',
  ],
  todo: [
    'get_user_current_date()', 'get_user_current_location()', 'get_projects()', 'update_project(project_id, is_favorite)',
    'get_tasks(project_id)', 'get_task_description(task_id)', 'get_task_duration(task_id)', 'complete_task(task_id)',
    'update_task(task_id, due_date)', 'delete_task(task_id)', 'check_valid_actions()', 'finish(answer)',
  ],
  sheet: [
    'open_sheet(name)', 'del_sheet(name)', 'freeze_data(dimension, num)', 'get_A1_annotation(row, col)', 'insert_cols(values_list, col_idx)',
    'insert_rows(values_list, row_idx)', 'delete_batch_data(dimension, index_list)', 'update_cell(position, value)',
    'update_cell_by_formula(start_position, end_position, position_list, result_position, operator)',
    'update_range(start_position, end_position, values_list)', 'sort_sheet_by_col(col_num, order)', 'merge_cells(start_position, end_position)',
    'update_note(position, content)', 'get_all_values()', 'get_range_values(start_position, end_position)', 'get_cell_value(position)',
    'get_value_by_formula(start_position, end_position, position_list, operator)', 'filter_cells(query, in_row, in_column)',
    'get_note(position)', 'finish()',
  ],
  academia: [
    'loadPaperNet()', 'loadAuthorNet()', 'neighbourCheck(graph, node)', 'paperNodeCheck(node)', 'authorNodeCheck(node)',
    'authorEdgeCheck(node1, node2)', 'finish(answer)',
  ],
};

function toolInstruction(functions: readonly string[]): string {
  return [
    'You are an autonomous agent that solves a task by calling tools.',
    'Tools (use check_valid_actions() when unsure, and finish(...) to give the final answer):',
    ...functions.map((f) => `- ${f}`),
    '',
    'Each round, think, then call exactly one tool in this format:',
    'Thought: <your thought>',
    '',
    'Action: <tool name> with Action Input: <arguments as a JSON object>',
    'For example: Action: get_latitude_longitude with Action Input: {"name": "Shanghai"}. A tool without arguments takes {}.',
    'The tool result comes back as the next observation.',
  ].join('\n');
}

function toolAdapter(type: AgentGymType & keyof typeof FUNCTIONS, title: string): AgentGymAdapter {
  return {
    type,
    title,
    idKey: 'env_idx',
    hasClose: false,
    instruction: toolInstruction(FUNCTIONS[type]),
    createBody: () => ({ id: 0 }),
    parseCreate: (body) => bareInt(body, '/create'),
    resetBody: (index) => ({ id: index }),
    parseReset: (body) => ({ observation: bareString(body, '/reset') }),
    parseObservation: (body) => bareString(body, 'GET /observation'),
    prepareAction: rawAction,
    parseStep: (body) => {
      const o = objectOf(body, '/step');
      return { observation: stringAt(o, 'observation'), reward: numberAt(o, 'reward'), done: booleanAt(o, 'done') };
    },
    success: (reward, done) => done && reward >= 1,
  };
}

/** @example weatherAdapter.createBody() // { id: 0 } */
export const weatherAdapter = toolAdapter('weather', 'Weather');
export const movieAdapter = toolAdapter('movie', 'Movie');
export const todoAdapter = toolAdapter('todo', 'Todo');
export const sheetAdapter = toolAdapter('sheet', 'Sheet');
export const academiaAdapter = toolAdapter('academia', 'Academia');
